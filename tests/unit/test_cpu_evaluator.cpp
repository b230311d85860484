// The sandbox, the compiler cache and the cpu evaluator's verdicts, on the saxpy fixture
// (tests/fixtures/cpu_eval). Budgets are small so the file runs in seconds.
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "hardware/confine.hpp"
#include "core/problem.hpp"
#include "hardware/compiler.hpp"
#include "hardware/cpu/cpu_evaluator.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(KMCTS_SOURCE_DIR) / "tests" / "fixtures" / "cpu_eval";

std::string variant(const std::string& name) {
  std::ifstream in(kFixtures / "variants" / name);
  REQUIRE_MESSAGE(in, "missing fixture " << name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A temporary folder that removes itself.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kmcts-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// One compile cache for the verdict tests of this process: the reference compiles once.
const fs::path& shared_cache() {
  static TempDir dir;
  return dir.path;
}

Config small_budget(const fs::path& cache) {
  Config c;
  c.set_value("evaluator.cpu_worker", KMCTS_CPU_WORKER, "test");
  c.set_value("evaluator.cache_dir", cache.string(), "test");
  c.set_value("evaluator.timeout_s", 20.0, "test");
  c.set_value("evaluator.min_samples", 10, "test");
  c.set_value("evaluator.min_time_ms", 1.0, "test");
  c.set_value("evaluator.max_time_ms", 300.0, "test");
  c.set_value("evaluator.warmup_ms", 1.0, "test");
  c.set_value("evaluator.flush_mb", 4, "test");
  return c;
}

CpuEvaluator saxpy_evaluator(const Config& config, const std::string& problem = "saxpy") {
  return CpuEvaluator(load_problem(kFixtures / problem), CpuEvaluatorSettings::from_config(config));
}

// ---- sandbox ----

TEST_CASE("cpu sandbox: captures stdout, stderr and the exit code") {
  SandboxResult r = run_sandboxed({"sh", "-c", "echo out; echo err >&2; exit 3"}, SandboxLimits{});
  CHECK(r.started);
  CHECK(r.out == "out\n");
  CHECK(r.err == "err\n");
  CHECK(r.exit_code == 3);
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.exited_cleanly());
}

TEST_CASE("cpu sandbox: megabytes on both streams do not deadlock") {
  // Far beyond a pipe's 64 KiB buffer on each stream at once.
  SandboxLimits limits;
  limits.timeout_s = 20;
  SandboxResult r = run_sandboxed(
      {"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a; head -c 2000000 /dev/zero | tr '\\0' b >&2"}, limits);
  CHECK(r.exited_cleanly());
  CHECK(r.out.size() == 3000000);
  CHECK(r.err.size() == 2000000);
}

TEST_CASE("cpu sandbox: a timeout kills the whole process group") {
  SandboxLimits limits;
  limits.timeout_s = 0.5;
  SandboxResult r = run_sandboxed({"sh", "-c", "sleep 30 & echo $!; sleep 30"}, limits);
  CHECK(r.timed_out);
  CHECK(r.wall_seconds < 5);
  // The background sleep (same group) must be gone too: no process, or an unreaped zombie.
  const std::string pid = r.out.substr(0, r.out.find('\n'));
  REQUIRE_FALSE(pid.empty());
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string text;
    if (!std::getline(stat, text)) break;
    if (text.substr(text.rfind(')') + 2, 1) == "Z") break;
    if (attempt == 49) FAIL("background child " << pid << " survived the timeout");
    usleep(20000);
  }
}

TEST_CASE("cpu sandbox: signals, limits and missing programs") {
  SandboxResult segv = run_sandboxed({"sh", "-c", "kill -SEGV $$"}, SandboxLimits{});
  CHECK(segv.signal == SIGSEGV);
  CHECK(signal_name(segv.signal) == "SIGSEGV");

  SandboxLimits small;
  small.memory_mb = 64;  // python or a big allocation fails; sh itself fits
  SandboxResult fits = run_sandboxed({"sh", "-c", "echo fine"}, small);
  CHECK(fits.exited_cleanly());

  SandboxResult missing = run_sandboxed({"kmcts-no-such-program"}, SandboxLimits{});
  CHECK_FALSE(missing.started);
  CHECK(missing.error.find("kmcts-no-such-program") != std::string::npos);

  SandboxResult bad_path = run_sandboxed({"/nonexistent/kmcts-tool"}, SandboxLimits{});
  CHECK_FALSE(bad_path.started);
  CHECK(bad_path.error.find("/nonexistent/kmcts-tool") != std::string::npos);
}

// ---- compiler ----

TEST_CASE("cpu compiler: the second build of a source is a cache hit") {
  TempDir cache;
  KernelCompiler compiler(CompilerSettings{"c++", cache.path, 60, 4096, {}}, cpu_compiler_flavor());
  const std::string source = variant("wrong.cpp");
  BuildResult first = compiler.compile(source);
  REQUIRE_MESSAGE(first.ok, first.log);
  CHECK_FALSE(first.cached);
  CHECK(fs::exists(first.artifact));
  CHECK(first.source_hash.size() == 64);
  BuildResult second = compiler.compile(source);
  CHECK(second.ok);
  CHECK(second.cached);
  CHECK(second.artifact == first.artifact);
  CHECK(second.seconds < first.seconds);
  // Different flags are a different object.
  KernelCompiler other(CompilerSettings{"c++", cache.path, 60, 4096, {"-DKMCTS_TEST_FLAG=1"}}, cpu_compiler_flavor());
  BuildResult third = other.compile(source);
  CHECK(third.ok);
  CHECK_FALSE(third.cached);
  CHECK(third.artifact != first.artifact);
}

TEST_CASE("cpu compiler: a compile is confined: a file of the user's home never reaches its log") {
  const ConfinementSupport& support = confinement_support();
  if (!support.mount_ns) {
    MESSAGE("no mount namespace here: " << support.refused);
    return;
  }
  TempDir cache;
  // The home outside /tmp (the compile's private /tmp would hide it anyway).
  const fs::path home = fs::absolute("kmcts-compile-home-" + std::to_string(getpid()));
  fs::create_directories(home);
  { std::ofstream(home / "secret.h") << "sekrit_value_4242 is not C++\n"; }
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home ? old_home : "";
  setenv("HOME", home.c_str(), 1);
  KernelCompiler compiler(CompilerSettings{"c++", cache.path, 60, 4096, {}}, cpu_compiler_flavor());
  BuildResult stolen = compiler.compile("#include \"" + (home / "secret.h").string() + "\"\n" + variant("wrong.cpp"));
  BuildResult plain = compiler.compile(variant("wrong.cpp"));
  if (old_home) setenv("HOME", saved.c_str(), 1);
  else unsetenv("HOME");
  fs::remove_all(home);
  CHECK_FALSE(stolen.ok);
  CHECK(stolen.log.find("sekrit_value_4242") == std::string::npos);
  CHECK(stolen.log.find("secret.h") != std::string::npos);  // named, not read: "No such file"
  REQUIRE_MESSAGE(plain.ok, plain.log);  // and an ordinary compile still builds
}

TEST_CASE("cpu compiler: parallel compiles of one source agree") {
  TempDir cache;
  KernelCompiler compiler(CompilerSettings{"c++", cache.path, 60, 4096, {}}, cpu_compiler_flavor());
  const std::string source = variant("unwritten.cpp");
  BuildResult a, b;
  std::thread other([&] { a = compiler.compile(source); });
  b = compiler.compile(source);
  other.join();
  CHECK(a.ok);
  CHECK(b.ok);
  CHECK(a.artifact == b.artifact);
  CHECK(fs::exists(a.artifact));
  // Nothing is left behind in the work folder.
  CHECK(fs::is_empty(compiler.object_dir() / "tmp"));
}

TEST_CASE("cpu compiler: an unknown compiler is an input error naming it") {
  TempDir cache;
  CHECK_THROWS_WITH_AS(KernelCompiler(CompilerSettings{"kmcts-no-such-cc", cache.path, 60, 4096, {}}, cpu_compiler_flavor()),
                       doctest::Contains("kmcts-no-such-cc"), InputError);
}

// ---- evaluator verdicts ----

TEST_CASE("cpu evaluator: a correct variant is ok with a speedup") {
  Config config = small_budget(shared_cache());
  CpuEvaluator evaluator = saxpy_evaluator(config);
  EvalResult r = evaluator.evaluate(load_problem(kFixtures / "saxpy").seed_source);
  INFO(r.message << "\n" << r.log);
  REQUIRE(r.verdict == Verdict::ok);
  CHECK(r.speedup > 0);
  CHECK(r.candidate.samples() >= 10);
  CHECK(r.reference.samples() >= 10);
  CHECK(r.candidate.median_ns > 0);
  CHECK(r.details["counters"]["samples_candidate"].get<int>() == r.candidate.samples());
  CHECK(r.details["counters"]["warmup_calls_candidate"].get<int>() >= 3);
  CHECK(r.run_seconds > 0);
}

TEST_CASE("cpu evaluator: a wrong element is named") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()));
  EvalResult r = evaluator.evaluate(variant("wrong.cpp"));
  INFO(r.message);
  REQUIRE(r.verdict == Verdict::wrong_answer);
  CHECK(r.details["first_bad_index"] == 1000);
  CHECK(r.details["output"] == "y");
  CHECK(r.details["trial"] == 0);
  CHECK(r.details["max_abs_err"].get<double>() == doctest::Approx(1.0).epsilon(1e-3));
  CHECK(r.details.contains("expected"));
  CHECK(r.details.contains("got"));
  CHECK(r.message.find("1000") != std::string::npos);
}

TEST_CASE("cpu evaluator: a crash is reported with the signal") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()));
  EvalResult r = evaluator.evaluate(variant("crash.cpp"));
  CHECK(r.verdict == Verdict::crash);
#if !defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer (-DKMCTS_SANITIZE=ON) the worker's own SEGV handler reports and
  // exits with code 1: still a crash, but no signal reaches the parent.
  CHECK(r.message == "crash: SIGSEGV");
  CHECK(r.details["signal"] == "SIGSEGV");
#endif
}

TEST_CASE("cpu evaluator: a hang is a timeout") {
  Config config = small_budget(shared_cache());
  config.set_value("evaluator.timeout_s", 2.0, "test");
  CpuEvaluator evaluator = saxpy_evaluator(config);
  EvalResult r = evaluator.evaluate(variant("hang.cpp"));
  CHECK(r.verdict == Verdict::timeout);
  CHECK(r.run_seconds < 6);
}

TEST_CASE("cpu evaluator: a compile error carries the compiler's message") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()));
  EvalResult r = evaluator.evaluate(variant("broken.cpp"));
  CHECK(r.verdict == Verdict::compile_error);
  CHECK(r.log.find("undeclared_scale") != std::string::npos);
  CHECK(r.log.find("kernel.cpp") != std::string::npos);
  CHECK(r.message.rfind("compile error: ", 0) == 0);
}

TEST_CASE("cpu evaluator: an unwritten output element is caught by the NaN poison") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()));
  EvalResult r = evaluator.evaluate(variant("unwritten.cpp"));
  INFO(r.message);
  REQUIRE(r.verdict == Verdict::wrong_answer);
  CHECK(r.details["first_bad_index"] == 65535);
  CHECK(r.details["unwritten_elements"] == 1);
  CHECK(r.message.find("never written") != std::string::npos);
}

TEST_CASE("cpu evaluator: modifying an input is a wrong answer") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()));
  EvalResult r = evaluator.evaluate(variant("mutates_input.cpp"));
  INFO(r.message);
  REQUIRE(r.verdict == Verdict::wrong_answer);
  CHECK(r.details["rule"] == "input_modified");
  CHECK(r.details["input"] == "x");
  CHECK(r.details["first_bad_index"] == 7);
}

TEST_CASE("cpu evaluator: correct first, then skipping work, is caught after timing") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()));
  EvalResult r = evaluator.evaluate(variant("skip_after.cpp"));
  INFO(r.message);
  REQUIRE(r.verdict == Verdict::wrong_answer);
  CHECK(r.details["phase"] == "timing");
}

TEST_CASE("cpu evaluator: zeros cannot pass for outputs far below atol") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()), "tiny");
  EvalResult r = evaluator.evaluate(variant("tiny_scale.cpp"));
  INFO(r.message);
  REQUIRE(r.verdict == Verdict::wrong_answer);
  CHECK(r.details["rule"] == "scale");
}

TEST_CASE("cpu evaluator: a missing kmcts_kernel symbol is a clear failure") {
  CpuEvaluator evaluator = saxpy_evaluator(small_budget(shared_cache()));
  EvalResult r = evaluator.evaluate(variant("no_symbol.cpp"));
  CHECK(r.verdict == Verdict::compile_error);
  CHECK(r.message.find("kmcts_kernel") != std::string::npos);
}

TEST_CASE("cpu evaluator: a ~10 ms kernel is measured within the default budgets") {
  Config config;
  config.set_value("evaluator.cpu_worker", KMCTS_CPU_WORKER, "test");
  config.set_value("evaluator.cache_dir", shared_cache().string(), "test");
  CpuEvaluator evaluator = saxpy_evaluator(config);
  EvalResult r = evaluator.evaluate(variant("slow_10ms.cpp"));
  INFO(r.message << " " << r.details.dump());
  REQUIRE(r.verdict == Verdict::ok);
  MESSAGE("10 ms-class kernel: candidate median " << r.candidate.median_ns * 1e-6 << " ms, "
          << r.candidate.samples() << " samples, worker wall " << r.run_seconds << " s, stop "
          << r.details["counters"]["stop_reason"]);
  CHECK(r.speedup < 1);
  CHECK(r.candidate.samples() >= 20);
  // max_time_ms (2 s) bounds the timing loop even when noise keeps the rse high: the loop stops
  // for time, within a block of it (the worker's own clock: a busy machine may slow the rest).
  const nlohmann::json& counters = r.details["counters"];
  if (counters["stop_reason"] == "max_time") CHECK(counters["timing_wall_ms"].get<double>() < 2000.0 + 500.0);
}

// ---- construction and registry ----

TEST_CASE("cpu evaluator: created by name, and a missing worker names the path") {
  Config config = small_budget(shared_cache());
  Problem problem = load_problem(kFixtures / "saxpy");
  auto evaluator = EvaluatorRegistry::instance().create("evaluator", "cpu", problem, config);
  REQUIRE(evaluator);
  CHECK(evaluator->describe()["evaluator"] == "cpu");

  config.set_value("evaluator.cpu_worker", "/nonexistent/kmcts-cpu-worker", "test");
  CHECK_THROWS_WITH_AS(EvaluatorRegistry::instance().create("evaluator", "cpu", problem, config),
                       doctest::Contains("/nonexistent/kmcts-cpu-worker"), InputError);

  Config inverted = small_budget(shared_cache());
  inverted.set_value("evaluator.min_samples", 100, "test");
  inverted.set_value("evaluator.max_samples", 50, "test");
  CHECK_THROWS_AS(CpuEvaluatorSettings::from_config(inverted), InputError);
}

}  // namespace
}  // namespace kmcts
