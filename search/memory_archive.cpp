#include "search/memory_archive.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "hardware/worker_result.hpp"
#include "search/detail/sqlite.hpp"
#include "search/run_store.hpp"

KMCTS_OPTION("agents.feedback.memory", Bool, true, std::nullopt, std::nullopt,
             "Record each improvement a search finds (a child that measured faster than its parent) in the "
             "optimisation archive at agents.memory.path when the search ends; `kmcts memory list` shows them")
KMCTS_OPTION("agents.memory.k", Int, 5, 0, 50,
             "How many of the archive's improvements a new run shows its Planner (the most relevant: same "
             "operator, then size class, then hardware), taken at its start and kept in the run, so a resume or "
             "replay asks what the run asked; 0 = none. kmcts ablate sets 0 for grids that do not set it (a run "
             "would otherwise read the archive as the grid's earlier runs left it).")
KMCTS_OPTION("agents.memory.path", String, "", std::nullopt, std::nullopt,
             "The optimisation archive (SQLite), shared by the runs on this machine; empty = "
             "$XDG_DATA_HOME/kmcts/memory.sqlite, else ~/.local/share/kmcts/memory.sqlite")

namespace kmcts {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kColumns =
    "id, created_at, run, problem, kind, signature, hardware, plan, parent_hash, child_hash, parent_source, "
    "child_source, parent_ns, child_ns, interval, profiles, bottleneck";

MemoryEntry entry_from_row(const detail::Statement& q) {
  MemoryEntry e;
  e.id = q.int64(0);
  std::string* texts[] = {&e.created_at, &e.run,         &e.problem,     &e.kind,          &e.signature,
                          &e.hardware,   &e.plan,        &e.parent_hash, &e.child_hash,    &e.parent_source,
                          &e.child_source};
  for (int i = 0; i < 11; ++i) *texts[i] = q.text(i + 1);
  e.parent_ns = q.real(12);
  e.child_ns = q.real(13);
  e.interval = json::parse(q.text(14), nullptr, false);
  if (e.interval.is_discarded()) e.interval = nullptr;
  e.profiles = json::parse(q.text(15), nullptr, false);
  if (e.profiles.is_discarded()) e.profiles = nullptr;
  e.bottleneck = q.text(16);
  return e;
}

}  // namespace

json to_json(const MemoryEntry& e) {
  return {{"id", e.id},
          {"created_at", e.created_at},
          {"run", e.run},
          {"problem", e.problem},
          {"kind", e.kind},
          {"signature", e.signature},
          {"hardware", e.hardware},
          {"plan", e.plan},
          {"parent_hash", e.parent_hash},
          {"child_hash", e.child_hash},
          {"parent_source", e.parent_source},
          {"child_source", e.child_source},
          {"parent_ns", e.parent_ns},
          {"child_ns", e.child_ns},
          {"speedup", e.speedup()},
          {"interval", e.interval},
          {"profiles", e.profiles},
          {"bottleneck", e.bottleneck}};
}

MemoryEntry memory_entry_from_json(const json& j) {
  if (!j.is_object()) throw InputError("a memory entry is not a JSON object");
  MemoryEntry e;
  auto text = [&](const char* key, std::string& out, bool required) {
    if (!j.contains(key)) {
      if (required) throw InputError(fmt::format("a memory entry lacks \"{}\"", key));
      return;
    }
    if (!j[key].is_string()) throw InputError(fmt::format("a memory entry's \"{}\" is not a string", key));
    out = j[key].get<std::string>();
  };
  auto number = [&](const char* key, double& out) {
    if (!j.contains(key) || !j[key].is_number() || !(j[key].get<double>() > 0))
      throw InputError(fmt::format("a memory entry's \"{}\" is not a positive number", key));
    out = j[key].get<double>();
  };
  text("kind", e.kind, true);
  text("parent_hash", e.parent_hash, true);
  text("child_hash", e.child_hash, true);
  text("hardware", e.hardware, true);
  text("created_at", e.created_at, false);
  text("run", e.run, false);
  text("problem", e.problem, false);
  text("signature", e.signature, false);
  text("plan", e.plan, false);
  text("parent_source", e.parent_source, false);
  text("child_source", e.child_source, false);
  number("parent_ns", e.parent_ns);
  number("child_ns", e.child_ns);
  e.interval = j.value("interval", json(nullptr));
  e.profiles = j.value("profiles", json(nullptr));
  text("bottleneck", e.bottleneck, false);
  return e;
}

std::string operator_signature(const Problem& problem) {
  std::string op = problem.name;
  size_t i = 0;
  while (i < op.size() && std::isdigit(static_cast<unsigned char>(op[i]))) ++i;
  if (i > 0 && i < op.size() && op[i] == '_') op = op.substr(i + 1);
  op = to_lower(op);
  double elements = 0;
  for (const TensorSpec& t : problem.inputs) elements += static_cast<double>(t.numel());
  return elements > 0 ? fmt::format("{}|2^{}", op, static_cast<int>(std::lround(std::log2(elements)))) : op + "|";
}

struct MemoryArchive::Impl {
  explicit Impl(const fs::path& file) : db(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) {
    // Runs on one machine (or a cluster's shared disk) write it at once: wait for the lock.
    sqlite3_busy_timeout(db.handle(), 10000);
    db.exec(
        "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, created_at TEXT, run TEXT, problem TEXT, "
        "kind TEXT NOT NULL, signature TEXT, hardware TEXT NOT NULL, plan TEXT, parent_hash TEXT NOT NULL, "
        "child_hash TEXT NOT NULL, parent_source TEXT, child_source TEXT, parent_ns REAL, child_ns REAL, "
        "interval TEXT, UNIQUE (parent_hash, child_hash, hardware));"
        "CREATE INDEX IF NOT EXISTS entries_kind ON entries (kind);");
    // Archives made before entries carried profiles gain the columns (empty in old entries).
    bool has_profiles = false;
    for (auto q = db.prepare("PRAGMA table_info(entries)"); q.step();) has_profiles |= q.text(1) == "profiles";
    if (!has_profiles) db.exec("ALTER TABLE entries ADD COLUMN profiles TEXT; ALTER TABLE entries ADD COLUMN bottleneck TEXT;");
  }
  detail::Database db;
};

MemoryArchive::MemoryArchive(const fs::path& file) {
  std::error_code ec;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  impl_ = std::make_unique<Impl>(file);
}
MemoryArchive::~MemoryArchive() = default;

fs::path MemoryArchive::default_path() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return fs::path(xdg) / "kmcts" / "memory.sqlite";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".local" / "share" / "kmcts" / "memory.sqlite";
  return fs::temp_directory_path() / "kmcts-memory.sqlite";
}

fs::path MemoryArchive::path_from(const Config& config) {
  const std::string path = config.get_string("agents.memory.path");
  return path.empty() ? default_path() : fs::path(path);
}

const fs::path& MemoryArchive::file() const { return impl_->db.file(); }

bool MemoryArchive::add(const MemoryEntry& e) {
  auto q = impl_->db.prepare(
      "INSERT OR IGNORE INTO entries (created_at, run, problem, kind, signature, hardware, plan, parent_hash, "
      "child_hash, parent_source, child_source, parent_ns, child_ns, interval, profiles, bottleneck) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  q.bind(1, e.created_at.empty() ? utc_now() : e.created_at).bind(2, e.run).bind(3, e.problem).bind(4, e.kind);
  q.bind(5, e.signature).bind(6, e.hardware).bind(7, e.plan).bind(8, e.parent_hash).bind(9, e.child_hash);
  q.bind(10, e.parent_source).bind(11, e.child_source).bind(12, e.parent_ns).bind(13, e.child_ns);
  q.bind(14, e.interval.dump()).bind(15, e.profiles.dump()).bind(16, e.bottleneck);
  q.run();
  return impl_->db.changes() > 0;
}

std::vector<MemoryEntry> MemoryArchive::list() const {
  auto q = impl_->db.prepare(fmt::format("SELECT {} FROM entries ORDER BY id", kColumns));
  std::vector<MemoryEntry> out;
  while (q.step()) out.push_back(entry_from_row(q));
  return out;
}

std::optional<MemoryEntry> MemoryArchive::get(int64_t id) const {
  auto q = impl_->db.prepare(fmt::format("SELECT {} FROM entries WHERE id = ?1", kColumns));
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return entry_from_row(q);
}

namespace {

// What an entry shares with a problem's signature: the operator (8) and the size class (4).
int signature_rank(const MemoryEntry& e, const std::string& signature) {
  const std::string op = signature.substr(0, signature.find('|'));
  return 8 * (e.signature.substr(0, e.signature.find('|')) == op) + 4 * (e.signature == signature);
}

}  // namespace

std::vector<MemoryEntry> MemoryArchive::relevant(const std::string& kind, const std::string& signature,
                                                 const std::string& hardware, size_t k) const {
  auto q = impl_->db.prepare(fmt::format("SELECT {} FROM entries WHERE kind = ?1", kColumns));
  q.bind(1, kind);
  std::vector<std::pair<int, MemoryEntry>> scored;
  while (q.step()) {
    MemoryEntry e = entry_from_row(q);
    const int score = signature_rank(e, signature) + (e.hardware == hardware);
    scored.emplace_back(score, std::move(e));
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second.speedup() > b.second.speedup();
  });
  std::vector<MemoryEntry> out;
  for (auto& [score, e] : scored) {
    if (out.size() == k) break;
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

// The processor's name (/proc/cpuinfo's first "model name"), for a CPU evaluation, which names
// no device; the host's name where there is none.
std::string cpu_name(const json& info) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
  return info.value("host", std::string("unknown host"));
}

// What measured an evaluation: the CUDA worker's device (an object with its name), the
// KernelBench harness's device name, or else the processor.
std::string hardware_of(const json& details, const std::string& cpu) {
  const json device = details.value("device", json());
  if (device.is_object() && device.contains("name") && device["name"].is_string()) return device["name"];
  if (device.is_string() && device != "cpu" && !device.get<std::string>().empty()) return device;
  return cpu;
}

// A measurement's largest kernels as an entry keeps them: name, share and time per launch.
json top_kernels(const json& details) {
  json out = json::array();
  const json kernels = details.value("kernel_profile", json::object()).value("candidate", json::object()).value("kernels", json::array());
  for (const json& k : kernels) {
    if (out.size() == 3) break;
    out.push_back({{"name", k.value("name", "")}, {"share", k.value("share", 0.0)}, {"mean_ns", k.value("mean_ns", 0.0)}});
  }
  return out;
}

// The verdict of the measurement's main kernel ("memory-bound", ...), where ncu profiled it.
std::string bottleneck_kind(const json& details) {
  for (const json& k : details.value("hw_counters", json::object()).value("kernels", json::array()))
    if (k.contains("bottleneck_kind") && k["bottleneck_kind"].is_string()) return k["bottleneck_kind"];
  return "";
}

}  // namespace

std::vector<MemoryEntry> run_improvements(const RunStore& store, const Problem& problem) {
  const std::vector<NodeRecord> nodes = store.nodes();
  std::map<int, const NodeRecord*> by_id;
  for (const NodeRecord& n : nodes) by_id[n.id] = &n;
  std::map<int, EvalResult> last;  // each node's latest evaluation
  for (EvaluationRecord& e : store.evaluations(false)) last[e.node] = std::move(e.result);
  const json info = store.run_info();
  const std::string signature = operator_signature(problem);
  const std::string cpu = cpu_name(info);
  std::vector<MemoryEntry> out;
  std::map<int, bool> seen;  // a child reached by several edges counts once, by its first
  for (const EdgeRecord& edge : store.edges()) {
    if (edge.transposition || seen[edge.child]) continue;
    const auto parent = by_id.find(edge.parent), child = by_id.find(edge.child);
    if (parent == by_id.end() || child == by_id.end()) continue;
    const NodeRecord& p = *parent->second;
    const NodeRecord& c = *child->second;
    if (p.verdict != "ok" || c.verdict != "ok" || !(p.median_ns > 0) || !(c.median_ns > 0) ||
        !(c.median_ns < p.median_ns))
      continue;
    seen[edge.child] = true;
    MemoryEntry m;
    m.run = store.dir().string();
    m.problem = problem.name;
    m.kind = problem.kind;
    m.signature = signature;
    const auto result = last.find(c.id), before = last.find(p.id);
    const json details = result == last.end() ? json::object() : result->second.details;
    const json parent_details = before == last.end() ? json::object() : before->second.details;
    m.hardware = hardware_of(details, cpu);
    if (json b = top_kernels(parent_details), a = top_kernels(details); !b.empty() || !a.empty())
      m.profiles = {{"before", std::move(b)}, {"after", std::move(a)}};
    m.bottleneck = bottleneck_kind(parent_details);
    m.interval = details.value("speedup_ci", json(nullptr));
    m.plan = edge.plan;
    m.parent_hash = p.hash;
    m.child_hash = c.hash;
    m.parent_source = store.source(p.hash).value_or("");
    m.child_source = store.source(c.hash).value_or("");
    m.parent_ns = p.median_ns;
    m.child_ns = c.median_ns;
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

std::string memory_line(const MemoryEntry& e) {
  std::string plan = e.plan.substr(0, e.plan.find('\n'));
  if (plan.size() > 200) plan = plan.substr(0, 197) + "...";
  std::string out = fmt::format("- \"{}\" on {} ({}, {}): {:.2f}x faster than its parent ({} -> {})", plan, e.problem,
                                e.signature, e.hardware, e.speedup(), format_ns(e.parent_ns), format_ns(e.child_ns));
  if (!e.bottleneck.empty()) out += "; the parent was " + e.bottleneck;
  const json before = e.profiles.is_object() ? e.profiles.value("before", json::array()) : json::array();
  const json after = e.profiles.is_object() ? e.profiles.value("after", json::array()) : json::array();
  if (!before.empty() && !after.empty())
    out += fmt::format("; main kernel {} ({:.0f}% of its time) -> {} ({:.0f}%)", before[0].value("name", ""),
                       100 * before[0].value("share", 0.0), after[0].value("name", ""), 100 * after[0].value("share", 0.0));
  return out + "\n";
}

}  // namespace

json memory_for(const Problem& problem, const Config& config) {
  const int64_t k = config.get_int("agents.memory.k");
  if (!config.get_bool("agents.feedback.memory") || k <= 0) return {{"memory_prompt", ""}};
  json out = {{"memory_prompt", ""}, {"memory_candidates", json::array()}, {"memory_k", k}};
  const fs::path path = MemoryArchive::path_from(config);
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  try {
    const MemoryArchive archive(path);
    // The hardware is known before the first evaluation only for the CPU.
    const std::string signature = operator_signature(problem);
    const std::string hardware = problem.kind == "cpu" ? cpu_name(json::object()) : "";
    std::string lines;
    for (const MemoryEntry& e : archive.relevant(problem.kind, signature, hardware, static_cast<size_t>(4 * k))) {
      const std::string line = memory_line(e);
      if (out["memory_candidates"].size() < static_cast<size_t>(k)) lines += line;
      out["memory_candidates"].push_back({{"line", line}, {"rank", signature_rank(e, signature)}, {"hardware", e.hardware}, {"bottleneck", e.bottleneck}});
    }
    out["memory_prompt"] = lines;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kmcts: the optimisation archive {} could not be read: {}\n", path.string(), e.what());
  }
  return out;
}

std::string memory_prompt_after_seed(const json& memory, const json& seed_details) {
  const json candidates = memory.value("memory_candidates", json());
  if (!candidates.is_array() || candidates.empty()) return memory.value("memory_prompt", std::string());
  const json details = seed_details.is_object() ? seed_details : json::object();
  const std::string hardware = hardware_of(details, cpu_name(json::object())), verdict = bottleneck_kind(details);
  std::vector<std::pair<int, const json*>> ranked;  // stable: ties keep the archive's order (larger gain first)
  for (const json& c : candidates)
    ranked.emplace_back(c.value("rank", 0) + 1 * (c.value("hardware", "") == hardware) +
                            2 * (!verdict.empty() && c.value("bottleneck", "") == verdict),
                        &c);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  const size_t k = memory.value("memory_k", static_cast<size_t>(0));
  for (size_t i = 0; i < ranked.size() && i < k; ++i) out += ranked[i].second->value("line", "");
  return out;
}

std::string record_run_improvements(const RunStore& store, const Problem& problem, const Config& config) {
  if (!config.get_bool("agents.feedback.memory")) return "";
  // The synthetic evaluator measures nothing, and the replay evaluator only answers with what
  // another run measured (on whatever hardware that was; that run recorded it).
  if (const std::string name = config.get_string("evaluator.name"); name == "synthetic" || name == "replay") return "";
  fs::path path;
  try {
    path = MemoryArchive::path_from(config);
    const std::vector<MemoryEntry> found = run_improvements(store, problem);
    if (found.empty()) return "";
    MemoryArchive archive(path);
    size_t added = 0;
    for (const MemoryEntry& e : found) added += archive.add(e) ? 1 : 0;
    return fmt::format("memory: {} improvement(s) recorded in {} ({} already there)", added, path.string(),
                       found.size() - added);
  } catch (const std::exception& e) {
    return fmt::format("memory: not recorded in {}: {}", path.string(), e.what());
  }
}

}  // namespace kmcts
