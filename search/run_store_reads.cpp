#include "search/run_store.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "search/detail/run_store_impl.hpp"

// The read half of RunStore: records come back exactly as they were written.
namespace kmcts {
namespace fs = std::filesystem;
using nlohmann::json;
using detail::parse_stored_json;
using detail::kNodeColumns;

const fs::path& RunStore::dir() const { return impl_->dir; }

namespace {

// The 8 statistics columns of one kernel starting at column `first` (see bind_stats in
// run_store.cpp). Column `first` is the sample count, which only SQL users need: the samples
// themselves are a JSON array column, read when asked for.
TimingStats read_stats(const detail::Statement& st, int first) {
  TimingStats t;
  t.median_ns = st.real(first + 1);
  t.q1_ns = st.real(first + 2);
  t.q3_ns = st.real(first + 3);
  t.min_ns = st.real(first + 4);
  t.mean_ns = st.real(first + 5);
  t.cv = st.real(first + 6);
  t.rse_median = st.real(first + 7);
  return t;
}

// One column of the single run row.
std::string run_column(detail::Database& db, const char* column, bool* is_null = nullptr) {
  auto st = db.prepare(std::string("SELECT ") + column + " FROM run WHERE id = 1");
  if (!st.step()) throw RunError("no run row in " + db.file().string());
  if (is_null) *is_null = st.is_null(0);
  return st.text(0);
}

}  // namespace

json RunStore::run_info() const {
  return parse_stored_json(run_column(impl_->db, "info"), impl_->db.file(), "run info");
}

json RunStore::config() const {
  return parse_stored_json(run_column(impl_->db, "config"), impl_->db.file(), "config");
}

std::string RunStore::status() const { return run_column(impl_->db, "status"); }

std::optional<json> RunStore::summary() const {
  bool is_null = false;
  std::string text = run_column(impl_->db, "summary", &is_null);
  if (is_null) return std::nullopt;
  return parse_stored_json(text, impl_->db.file(), "summary");
}

std::vector<NodeRecord> RunStore::nodes() const {
  auto st = impl_->db.prepare(std::string("SELECT ") + kNodeColumns + " FROM nodes ORDER BY id");
  std::vector<NodeRecord> out;
  while (st.step()) {
    NodeRecord n;
    n.id = st.integer(0);
    n.hash = st.text(1);
    n.status = node_status_from_string(st.text(2));
    n.verdict = st.text(3);
    n.origin = st.text(4);
    n.depth = st.integer(5);
    n.speedup = st.real(6);
    n.median_ns = st.real(7);
    n.reward = st.real(8);
    n.visits = st.integer(9);
    n.value_sum = st.real(10);
    n.debug_attempts = st.integer(11);
    n.meta = parse_stored_json(st.text(12), impl_->db.file(), "node meta");
    n.plan = st.text(13);
    n.created_seq = st.int64(14);
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<EdgeRecord> RunStore::edges() const {
  auto st = impl_->db.prepare(
      "SELECT parent, child, kind, plan, plan_data, transposition, visits, seq FROM edges "
      "ORDER BY rowid");
  std::vector<EdgeRecord> out;
  while (st.step()) {
    EdgeRecord e;
    e.parent = st.integer(0);
    e.child = st.integer(1);
    e.kind = edge_kind_from_string(st.text(2));
    e.plan = st.text(3);
    e.plan_data = parse_stored_json(st.text(4), impl_->db.file(), "edge plan data");
    e.prior = prior_of_plan_data(e.plan_data);
    e.transposition = st.integer(5) != 0;
    e.visits = st.integer(6);
    e.seq = st.int64(7);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<EvaluationRecord> RunStore::evaluations(bool with_samples) const {
  auto st = impl_->db.prepare(
      std::string("SELECT id, node, seq, verdict, message, speedup, compile_seconds, run_seconds, "
                  "compile_cached, details, log, log_file, ") +
      "cand_n, cand_median_ns, cand_q1_ns, cand_q3_ns, cand_min_ns, cand_mean_ns, cand_cv, "
      "cand_rse_median, ref_n, ref_median_ns, ref_q1_ns, ref_q3_ns, ref_min_ns, ref_mean_ns, "
      "ref_cv, ref_rse_median, cand_samples_ns, ref_samples_ns FROM evaluations ORDER BY id");
  std::vector<EvaluationRecord> out;
  while (st.step()) {
    EvaluationRecord ev;
    ev.node = st.integer(1);
    ev.seq = st.int64(2);
    EvalResult& r = ev.result;
    r.verdict = verdict_from_string(st.text(3));
    r.message = st.text(4);
    r.speedup = st.real(5);
    r.compile_seconds = st.real(6);
    r.run_seconds = st.real(7);
    r.compile_cached = st.integer(8) != 0;
    r.details = parse_stored_json(st.text(9), impl_->db.file(), "evaluation details");
    r.log = st.is_null(11) ? st.text(10) : read_file(impl_->dir / st.text(11));
    r.candidate = read_stats(st, 12);
    r.reference = read_stats(st, 20);
    if (with_samples) {
      r.candidate.samples_ns = parse_stored_json(st.text(28), impl_->db.file(), "candidate samples").get<std::vector<double>>();
      r.reference.samples_ns = parse_stored_json(st.text(29), impl_->db.file(), "reference samples").get<std::vector<double>>();
    }
    out.push_back(std::move(ev));
  }
  return out;
}

std::vector<EventRecord> RunStore::events() const {
  auto st = impl_->db.prepare("SELECT seq, time_s, kind, payload FROM events ORDER BY seq");
  std::vector<EventRecord> out;
  while (st.step()) {
    EventRecord e;
    e.seq = st.int64(0);
    e.time_s = st.real(1);
    e.kind = st.text(2);
    e.payload = parse_stored_json(st.text(3), impl_->db.file(), "event payload");
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::string> RunStore::source(const std::string& hash) const {
  detail::check_hash(hash);
  const fs::path path = impl_->dir / "sources" / (hash + ".cpp");
  if (!fs::exists(path)) return std::nullopt;
  return read_file(path);
}

}  // namespace kmcts
