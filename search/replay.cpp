#include "search/replay.hpp"

#include <unistd.h>

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "search/event_replayer.hpp"
#include "search/recorded_config.hpp"

namespace kmcts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using State = Coordinator::State;

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// An event's payload without what says how long things took, not what the search did, nor how
// an LLM reply was fetched (attempts, the errors of failed attempts, retries, whether
// the cassette had it or recorded it): a run re-run from its cassette gets every reply at once.
json without_transport(json payload) {
  payload.erase("agent_seconds");
  // Logs before 2026-12-03 recorded only how many spare plans a call gave: compare counts.
  if (payload.contains("spare_plans") && payload["spare_plans"].is_array())
    payload["spare_plans"] = payload["spare_plans"].size();
  if (payload.contains("usage") && payload["usage"].is_object()) payload["usage"].erase("retries");
  if (payload.contains("llm_calls") && payload["llm_calls"].is_array())
    for (auto& call : payload["llm_calls"])
      for (const char* key : {"seconds", "attempts", "errors", "cassette"}) call.erase(key);
  return payload;
}

// Where two JSON values first differ: "path: a rebuilt, b recorded".
std::string first_difference(const json& rebuilt, const json& recorded, const std::string& path) {
  if (rebuilt.is_object() && recorded.is_object()) {
    for (const auto& [key, value] : recorded.items()) {
      if (!rebuilt.contains(key)) return fmt::format("{}/{} is recorded but not rebuilt", path, key);
      if (std::string d = first_difference(rebuilt[key], value, path + "/" + key); !d.empty()) return d;
    }
    for (const auto& [key, value] : rebuilt.items())
      if (!recorded.contains(key)) return fmt::format("{}/{} is rebuilt but not recorded", path, key);
    return "";
  }
  if (rebuilt.is_array() && recorded.is_array() && rebuilt.size() == recorded.size()) {
    for (size_t i = 0; i < rebuilt.size(); ++i)
      if (std::string d = first_difference(rebuilt[i], recorded[i], fmt::format("{}/{}", path, i)); !d.empty()) return d;
    return "";
  }
  if (rebuilt == recorded) return "";
  auto shown = [](const json& v) { std::string t = v.dump(); return t.size() > 200 ? t.substr(0, 200) + "..." : t; };
  return fmt::format("{} is {} rebuilt, {} recorded", path.empty() ? "/" : path, shown(rebuilt), shown(recorded));
}

// Node by node, in id order; `rebuilt` gets node i for i < `count`.
template <typename Rebuilt>
std::string compare_nodes(int count, Rebuilt rebuilt, const std::vector<NodeRecord>& stored, bool statistics) {
  if (static_cast<int>(stored.size()) != count)
    return fmt::format("{} nodes rebuilt, {} stored", count, stored.size());
  for (const NodeRecord& want : stored) {
    const NodeRecord& got = rebuilt(want.id);
    auto differs = [&](const char* field, const std::string& a, const std::string& b) {
      return fmt::format("node {}: {} is {} rebuilt, {} stored", want.id, field, a, b);
    };
    if (got.hash != want.hash) return differs("hash", got.hash, want.hash);
    if (got.status != want.status) return differs("status", to_string(got.status), to_string(want.status));
    if (!close(got.reward, want.reward)) return differs("reward", fmt::format("{}", got.reward), fmt::format("{}", want.reward));
    if (!statistics) continue;
    if (got.visits != want.visits) return differs("visits", std::to_string(got.visits), std::to_string(want.visits));
    if (!close(got.value_sum, want.value_sum)) return differs("value_sum", fmt::format("{}", got.value_sum), fmt::format("{}", want.value_sum));
    if (got.debug_attempts != want.debug_attempts) return differs("debug_attempts", std::to_string(got.debug_attempts), std::to_string(want.debug_attempts));
  }
  return "";
}

// `rebuilt(parent, child)` is the rebuilt edge or nullptr.
template <typename Rebuilt>
std::string compare_edges(int count, Rebuilt rebuilt, const std::vector<EdgeRecord>& stored, bool statistics) {
  if (static_cast<int>(stored.size()) != count)
    return fmt::format("{} edges rebuilt, {} stored", count, stored.size());
  for (const EdgeRecord& want : stored) {
    const EdgeRecord* got = rebuilt(want.parent, want.child);
    if (!got) return fmt::format("edge {} -> {} is stored but was not rebuilt", want.parent, want.child);
    if (got->kind != want.kind || (statistics && got->visits != want.visits) || got->transposition != want.transposition)
      return fmt::format("edge {} -> {}: kind/visits/transposition {}/{}/{} rebuilt, {}/{}/{} stored", want.parent, want.child,
                         to_string(got->kind), got->visits, got->transposition, to_string(want.kind), want.visits, want.transposition);
  }
  return "";
}

std::string graph_nodes_differ(const VariantGraph& g, const std::vector<NodeRecord>& stored, bool statistics) {
  return compare_nodes(g.size(), [&g](int id) -> const NodeRecord& { return g.node(id); }, stored, statistics);
}

std::string graph_edges_differ(const VariantGraph& g, const std::vector<EdgeRecord>& stored, bool statistics) {
  return compare_edges(g.edge_count(), [&g](int parent, int child) { return g.edge(parent, child); }, stored, statistics);
}

}  // namespace

std::string compare_events(const std::vector<EventRecord>& rebuilt, const std::vector<EventRecord>& recorded) {
  for (size_t i = 0; i < rebuilt.size(); ++i) {
    if (i >= recorded.size()) return fmt::format("event {} was rebuilt but not recorded", rebuilt[i].seq);
    if (rebuilt[i].seq != recorded[i].seq || rebuilt[i].kind != recorded[i].kind)
      return fmt::format("event {}: rebuilt {} {}, recorded {} {}", recorded[i].seq, rebuilt[i].seq, rebuilt[i].kind,
                         recorded[i].seq, recorded[i].kind);
    json got = without_transport(rebuilt[i].payload), want = without_transport(recorded[i].payload);
    // agent_failed events record the taken plan's prior since 819be3f (2026-12-06): an older log
    // has none, and the replay's default is not a difference.
    if (recorded[i].kind == "agent_failed" && !want.contains("prior")) got.erase("prior");
    if (std::string d = first_difference(got, want, ""); !d.empty())
      return fmt::format("event {} ({}): {}", recorded[i].seq, recorded[i].kind, d);
  }
  return "";
}

std::string compare_runs(const RunStore& rebuilt, const RunStore& recorded) {
  std::vector<EventRecord> got = rebuilt.events(), want = recorded.events();
  if (got.size() != want.size()) return fmt::format("{} events rebuilt, {} recorded", got.size(), want.size());
  if (std::string d = compare_events(got, want); !d.empty()) return d;
  const std::vector<NodeRecord> nodes = rebuilt.nodes();
  std::string d = compare_nodes(static_cast<int>(nodes.size()), [&nodes](int id) -> const NodeRecord& { return nodes[static_cast<size_t>(id)]; },
                                recorded.nodes(), true);
  if (!d.empty()) return d;
  const std::vector<EdgeRecord> edges = rebuilt.edges();
  auto find = [&edges](int parent, int child) -> const EdgeRecord* {
    for (const EdgeRecord& e : edges)
      if (e.parent == parent && e.child == child) return &e;
    return nullptr;
  };
  return compare_edges(static_cast<int>(edges.size()), find, recorded.edges(), true);
}

namespace {

class Replayer {
 public:
  Replayer(RunStore& original, const fs::path& scratch) {
    Config config;
    config.merge(original.config(), (original.dir() / "config.json").string());
    fix_recorded_config(config, original.config());
    auto nodes = original.nodes();
    if (nodes.empty()) throw InputError(fmt::format("{}: the run has no nodes to replay", original.dir().string()));
    problem_.name = original.run_info().value("problem", "");
    problem_.seed_source = original.source(nodes[0].hash).value_or("");
    problem_.seed_meta = nodes[0].meta;
    SearchParts parts;
    parts.strategy = StrategyRegistry::instance().create("strategy", config.get_string("search.strategy"), config);
    parts.reward = RewardRegistry::instance().create("reward", config.get_string("search.reward"), config);
    SearchSettings settings = SearchSettings::from_config(config);
    settings.progress = false;
    store_ = RunStore::create(scratch, original.run_info(), original.config());
    state_ = std::make_unique<State>(problem_, settings, std::move(parts), *store_);
    state_->replaying = true;
    events_ = std::make_unique<detail::EventReplayer>(*state_, graph_, original);
  }

  std::string apply(const EventRecord& e) { return events_->apply(e); }

  std::string compare_events(const std::vector<EventRecord>& recorded) const {
    state_->writer.sync();
    return kmcts::compare_events(store_->events(), recorded);
  }

  const VariantGraph& graph() const { return graph_; }
  const State& state() const { return *state_; }

 private:
  Problem problem_;
  std::unique_ptr<RunStore> store_;
  std::unique_ptr<State> state_;
  VariantGraph graph_;
  std::unique_ptr<detail::EventReplayer> events_;
};

}  // namespace

namespace {

// A scratch folder for a replay of `run_dir`, removed when done.
class ScratchDir {
 public:
  explicit ScratchDir(const fs::path& run_dir)
      : path_(fs::temp_directory_path() / fmt::format("kmcts-replay-{}-{}", ::getpid(), run_dir.filename().string())) {
    fs::remove_all(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

json summarize_from_log(const fs::path& run_dir, const std::string& status, const std::string& message) {
  auto original = RunStore::open(run_dir);
  const auto events = original->events();
  if (original->nodes().empty())  // killed before its seed was recorded
    return {{"status", status}, {"message", message}, {"problem", original->run_info().value("problem", "")},
            {"run_dir", run_dir.string()}, {"evaluations", 0}, {"failures", 0}, {"nodes", 0}, {"edges", 0},
            {"wall_seconds", events.empty() ? 0.0 : events.back().time_s}};
  ScratchDir scratch(run_dir);
  Replayer replayer(*original, scratch.path());
  for (const auto& e : events)
    if (std::string mismatch = replayer.apply(e); !mismatch.empty())
      throw RunError(fmt::format("{}: its event log does not replay at event {} ({}): {}", run_dir.string(), e.seq, e.kind,
                                 mismatch));
  json summary = detail::summarize(replayer.state(), replayer.graph(), status, message);
  summary["run_dir"] = run_dir.string();
  summary["wall_seconds"] = events.empty() ? 0.0 : events.back().time_s;
  return summary;
}

ReplayReport replay_run(const fs::path& run_dir) {
  auto original = RunStore::open(run_dir);
  auto events = original->events();
  bool replayable = false;
  for (const auto& e : events) replayable |= e.kind == "select";
  if (!replayable && events.size() > 2)
    throw InputError(fmt::format("{}: the event log has no 'select' events (recorded before replay existed)", run_dir.string()));
  ScratchDir scratch(run_dir);
  ReplayReport report;
  {
    Replayer replayer(*original, scratch.path());
    std::vector<EventRecord> replayed;
    for (const auto& e : events) {
      std::string mismatch = replayer.apply(e);
      report.events++;
      if (!mismatch.empty()) {
        report.mismatch = fmt::format("event {} ({}): {}", e.seq, e.kind, mismatch);
        break;
      }
      replayed.push_back(e);
    }
    if (report.mismatch.empty()) report.mismatch = replayer.compare_events(replayed);
    report.statistics_compared = original->status() != "running";
    if (report.mismatch.empty()) report.mismatch = graph_nodes_differ(replayer.graph(), original->nodes(), report.statistics_compared);
    if (report.mismatch.empty()) report.mismatch = graph_edges_differ(replayer.graph(), original->edges(), report.statistics_compared);
    report.nodes = replayer.graph().size();
    report.edges = replayer.graph().edge_count();
    report.identical = report.mismatch.empty();
  }
  return report;
}

}  // namespace kmcts
