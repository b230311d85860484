#include "campaigns/kb_runner.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "campaigns/kb_leaderboard.hpp"
#include "campaigns/run_pool.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/problem.hpp"
#include "hardware/kernelbench/kernelbench_evaluator.hpp"
#include "campaigns/kb_remeasure.hpp"
#include "hardware/kernelbench/kernelbench_hygiene.hpp"
#include "search/coordinator.hpp"
#include "search/resume.hpp"
#include "search/run_lock.hpp"
#include "search/run_search.hpp"
#include "search/run_store.hpp"

namespace kmcts {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json campaign_record(const KbLeaderboardRequest& r, const std::vector<KbProblemFile>& files) {
  json names = json::array();
  for (const auto& f : files) names.push_back(f.name);
  return {{"level", r.level},
          {"mode", r.mode},
          {"budget", r.budget ? json(*r.budget) : json(nullptr)},
          {"problems", names},
          {"kb_root", fs::absolute(r.kb_root).string()},
          {"compile_baseline", r.compile_baseline}};
}

// A resumed campaign must ask for what the first one did: mixing modes or budgets in one
// leaderboard would make its numbers meaningless.
void check_or_record_campaign(const fs::path& out, const json& wanted, const std::string& command_line) {
  const fs::path file = out / "campaign.json";
  if (fs::exists(file)) {
    json had = json::parse(read_file(file));
    for (const char* key : {"level", "mode", "budget", "problems"})
      if (had.value(key, json()) != wanted[key])
        throw InputError(fmt::format("{} holds a campaign with {} {}, not {}; resume it with the same arguments or "
                                     "use another --out",
                                     out.string(), key, had.value(key, json()).dump(), wanted[key].dump()));
    return;
  }
  json record = wanted;
  record["command_line"] = command_line;
  write_file_atomic(file, record.dump(2) + "\n");
}

Config problem_config(const KbLeaderboardRequest& r, const std::string& gpu) {
  Config c = r.config;
  c.set_value("evaluator.name", "kernelbench", "kmcts kernelbench");
  c.set_value("evaluator.kernelbench.device", gpu, "--gpus");
  c.set_value("evaluator.kernelbench.mode", r.mode, "--mode");
  c.set_value("evaluator.kernelbench.time_compile", r.compile_baseline, "kmcts kernelbench");  // fast_p vs compile
  if (!r.compile_baseline) c.set_value("evaluator.kernelbench.baseline", "eager", "--no-compile-baseline");
  if (r.budget) c.set_value("search.budget", *r.budget, "--budget");
  return c;
}

std::string outcome_line(const json& res) {
  if (!res.value("correct", false)) {
    const std::string status = res.value("status", ""), message = res.value("message", "");
    if (status == "completed" || message.empty()) return fmt::format("no correct candidate ({})", status);
    return fmt::format("not evaluated ({}): {}", status, message);
  }
  const json sp = res.value("speedup", json::object());
  std::string line = "correct";
  for (const char* b : {"eager", "compile"})
    if (sp.contains(b) && sp[b].is_number()) line += fmt::format(", {:.3f}x vs {}", sp[b].get<double>(), b);
  return line;
}

// One problem from start (or from where a killed campaign left it) to its result file.
std::optional<json> run_problem(const KbLeaderboardRequest& r, const KbProblemFile& f, const std::string& gpu,
                                bool inner_progress) {
  const fs::path run_dir = r.out / "runs" / f.name;
  json summary;
  std::optional<std::string> status;
  if (fs::exists(run_dir / "run.sqlite")) status = RunStore::open(run_dir)->status();
  if (status == "running" || status == "interrupted") {  // killed, or stopped by Ctrl-C: it goes on
    ResumeRequest resume;
    resume.run_dir = run_dir;
    resume.overrides["evaluator.kernelbench.device"] = gpu;  // this worker's GPU, not the first run's
    resume.progress = inner_progress;
    summary = resume_search(resume);
  } else if (status) {
    summary = RunStore::open(run_dir)->summary().value_or(json{{"status", *status}});
  } else {
    if (fs::exists(run_dir)) {  // a folder with no run store in it (killed as it was made): aside, start again
      fs::path aside = run_dir;
      for (int k = 1; fs::exists(aside); ++k) aside = run_dir.string() + fmt::format(".unfinished-{}", k);
      fs::rename(run_dir, aside);
    }
    json hygiene = json::object();
    Config config = problem_config(r, gpu);
    if (r.hygiene) {
      Config where = config;
      if (!r.hygiene_device.empty()) where.set_value("evaluator.kernelbench.device", r.hygiene_device, "kmcts kernelbench");
      hygiene = kernelbench_hygiene(f.path, KernelBenchSettings::from_config(where));
    }
    fs::create_directories(run_dir.parent_path());
    write_file_atomic(r.out / "problems" / (f.name + ".hygiene.json"), hygiene.dump(2) + "\n");
    summary = run_search({f.path, config, run_dir, inner_progress, r.command_line, std::nullopt});
  }
  if (const std::string st = summary.value("status", ""); st == "interrupted" || st == "suspended") return std::nullopt;
  json result = kb_problem_result(f, run_dir, summary);
  if (r.remeasure && result.value("correct", false)) {
    const auto source = RunStore::open(run_dir)->source(result["best"].value("hash", std::string()));
    if (!source) throw std::runtime_error(fmt::format("{}: the best candidate's source is missing from {}", f.name,
                                                      run_dir.string()));
    apply_remeasurement(result, remeasure_candidate(f, *source, problem_config(r, gpu)));
  }
  const fs::path hygiene_file = r.out / "problems" / (f.name + ".hygiene.json");
  if (fs::exists(hygiene_file)) result["hygiene"] = json::parse(read_file(hygiene_file));
  result["gpu"] = r.mpi ? std::string("mpi") : gpu;
  write_file_atomic(r.out / "problems" / (f.name + ".json"), result.dump(2) + "\n");
  return result;
}

// One problem on one device, its outcome printed as a line.
void run_problem_on(const KbLeaderboardRequest& r, const KbProblemFile& f, const std::string& gpu, size_t total,
                    size_t already, std::mutex& print_mutex, size_t& done) {
  const bool inner_progress = r.progress && r.gpus.size() == 1;
  const std::string where = r.mpi ? std::string("the MPI workers") : gpu == "cpu" ? std::string("the CPU") : "GPU " + gpu;
  if (r.progress) fmt::print(stderr, "kmcts kernelbench: {} on {} (started)\n", f.name, where);
  const auto start = std::chrono::steady_clock::now();
  std::string line;
  try {
    auto result = run_problem(r, f, gpu, inner_progress);
    line = result ? outcome_line(*result) : "interrupted; `kmcts kernelbench` with the same --out resumes it";
  } catch (const InputError&) {
    throw;  // stops the campaign
  } catch (const std::exception& e) {  // the others go on; this one is tried again next time
    write_file_atomic(r.out / "problems" / (f.name + ".error.json"),
                      json{{"problem", f.name}, {"gpu", gpu}, {"message", e.what()}}.dump(2) + "\n");
    line = std::string("error (left unfinished, retried by the next run): ") + e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard<std::mutex> lock(print_mutex);
  ++done;
  if (r.progress)
    fmt::print(stderr, "kmcts kernelbench: [{}/{}] {} on {}: {} ({:.0f} s)\n", already + done, total, f.name, where, line,
               seconds);
}

// The hygiene check of every problem still to run, before the searches: one process per
// device over its share of the problems (torch's start once, not per problem), so each
// problem's run then finds its findings in the cache.
void check_hygiene_first(const KbLeaderboardRequest& r, const std::vector<KbProblemFile>& todo) {
  const std::vector<std::string> devices = r.hygiene_device.empty() ? r.gpus : std::vector<std::string>{r.hygiene_device};
  std::vector<std::vector<fs::path>> shares(devices.size());
  for (size_t i = 0; i < todo.size(); ++i) shares[i % devices.size()].push_back(todo[i].path);
  std::mutex mutex;
  HygieneBatch total;
  double longest = 0;
  run_pool(devices.size(), devices.size(), [&](size_t index, size_t) {
    Config where = problem_config(r, devices[index]);
    where.set_value("evaluator.kernelbench.device", devices[index], "kmcts kernelbench");
    HygieneBatch b;
    try {
      b = prefill_hygiene(shares[index], KernelBenchSettings::from_config(where));
    } catch (const std::exception& e) {  // each problem's own check says what it is, later
      b.failed = shares[index].size();
      if (r.progress) fmt::print(stderr, "kmcts kernelbench: the hygiene batch on {} failed: {}\n", devices[index], e.what());
    }
    std::lock_guard<std::mutex> lock(mutex);
    total.checked += b.checked, total.cached_before += b.cached_before, total.failed += b.failed;
    total.seconds += b.seconds;
    longest = std::max(longest, b.seconds);
  });
  if (r.progress)
    fmt::print(stderr,
               "kmcts kernelbench: hygiene of {} problems: {} checked in {:.0f} s ({:.1f} s per problem, {} "
               "process(es)), {} cached before, {} left to check alone\n",
               todo.size(), total.checked, longest, total.checked ? total.seconds / total.checked : 0.0,
               devices.size(), total.cached_before, total.failed);
}

}  // namespace

void request_leaderboard_stop() { request_pool_stop(); }

json run_kernelbench_leaderboard(const KbLeaderboardRequest& r) {
  if (r.out.empty()) throw InputError("kmcts kernelbench needs --out DIR");
  if (r.gpus.empty()) throw InputError("--gpus lists no device");
  problem_config(r, r.gpus.front());  // the options every search gets (--mode included) checked before anything runs
  const std::vector<KbProblemFile> files = select_problems(discover_level(r.kb_root, r.level), r.problems);
  // A file that is not a KernelBench problem (no Model, get_inputs or get_init_inputs) is one
  // line and a failed problem in the summary; the others still run.
  std::map<std::string, std::string> not_problems;
  for (const auto& f : files) try {
      load_problem(f.path);
    } catch (const InputError& e) {
      not_problems[f.name] = e.what();
      if (r.progress) fmt::print(stderr, "kmcts kernelbench: {} not evaluated: {}\n", f.name, e.what());
    }
  fs::create_directories(r.out / "problems");
  FolderLock lock(r.out);  // one campaign per folder at a time
  check_or_record_campaign(r.out, campaign_record(r, files), r.command_line);

  std::vector<KbProblemFile> todo;
  for (const auto& f : files)
    if (!not_problems.contains(f.name) && !fs::exists(r.out / "problems" / (f.name + ".json"))) todo.push_back(f);
  if (r.progress)
    fmt::print(stderr, "kmcts kernelbench: level {}, {} problems ({} done before, {} not evaluable), {} mode, {}\n",
               r.level, files.size(), files.size() - todo.size() - not_problems.size(), not_problems.size(), r.mode,
               r.mpi ? fmt::format("{} searches at once on the MPI workers", r.gpus.size())
                     : fmt::format("GPUs {}", fmt::join(r.gpus, ",")));
  if (r.hygiene && !todo.empty()) check_hygiene_first(r, todo);
  if (pool_stop_requested()) todo.clear();  // Ctrl-C during the hygiene check: no search starts
  std::mutex print_mutex;
  size_t done = 0;
  run_pool(todo.size(), r.gpus.size(), [&](size_t index, size_t worker) {
    run_problem_on(r, todo[index], r.gpus[worker], files.size(), files.size() - todo.size(), print_mutex, done);
  });

  // Every selected problem counts in the denominators: an unfinished one is not correct.
  std::vector<json> results;
  json unfinished = json::array();
  for (const auto& f : files) {
    const fs::path file = r.out / "problems" / (f.name + ".json");
    if (fs::exists(file)) {
      results.push_back(json::parse(read_file(file)));
      continue;
    }
    if (auto bad = not_problems.find(f.name); bad != not_problems.end()) {
      results.push_back({{"problem", f.name}, {"status", "failed"}, {"message", bad->second}, {"correct", false}});
      continue;
    }
    const fs::path error = r.out / "problems" / (f.name + ".error.json");
    const std::string why = fs::exists(error) ? json::parse(read_file(error)).value("message", "") : "not run";
    unfinished.push_back(f.name);
    results.push_back({{"problem", f.name}, {"status", "unfinished"}, {"message", why}, {"correct", false}});
  }
  json summary = leaderboard_summary(results, LeaderboardOptions{r.own_share_threshold});
  summary["unfinished"] = unfinished;
  const json run = campaign_record(r, files);
  write_file_atomic(r.out / "summary.json", json{{"campaign", run}, {"leaderboard", summary}}.dump(2) + "\n");
  std::string md = leaderboard_markdown(summary, run);
  if (!unfinished.empty())
    md += fmt::format("\n{} problems unfinished: run the same command again to resume.\n", unfinished.size());
  write_file_atomic(r.out / "summary.md", md);
  return summary;
}

}  // namespace kmcts
