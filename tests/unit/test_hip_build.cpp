// HIP problems build with hipcc for an AMD GPU architecture, with clang's resource report
// (hardware/hip/hip_compiler.hpp). No AMD GPU is needed to compile; none has run them here.
#include <doctest/doctest.h>

#include <set>

#include "core/problem.hpp"
#include "core/files.hpp"
#include "hardware/hip/devices.hpp"
#include "hardware/hip/hip_compiler.hpp"
#include "scratch.hpp"

using namespace kmcts;
namespace fs = std::filesystem;

TEST_CASE("hip resource report: registers, LDS, scratch and spills per kernel from clang's remarks") {
  // As hipcc (ROCm 5.2, clang 15) printed it for problems/hip/colsum/reference.hip, plus a
  // second kernel with spills.
  const std::string log =
      "reference.hip:7:1: remark: Function Name: _Z16colsum_referencePKfPfii [-Rpass-analysis=kernel-resource-usage]\n"
      "__global__ void colsum_reference(const float* __restrict__ x, float* __restrict__ s, int rows, int cols) {\n"
      "^\n"
      "reference.hip:7:1: remark:     SGPRs: 14 [-Rpass-analysis=kernel-resource-usage]\n"
      "reference.hip:7:1: remark:     VGPRs: 21 [-Rpass-analysis=kernel-resource-usage]\n"
      "reference.hip:7:1: remark:     AGPRs: 0 [-Rpass-analysis=kernel-resource-usage]\n"
      "reference.hip:7:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]\n"
      "reference.hip:7:1: remark:     Occupancy [waves/SIMD]: 8 [-Rpass-analysis=kernel-resource-usage]\n"
      "reference.hip:7:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]\n"
      "reference.hip:7:1: remark:     VGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]\n"
      "reference.hip:7:1: remark:     LDS Size [bytes/block]: 8192 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:3:1: remark: Function Name: big [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:3:1: remark:     VGPRs: 256 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:3:1: remark:     ScratchSize [bytes/lane]: 64 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:3:1: remark:     SGPRs Spill: 2 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:3:1: remark:     VGPRs Spill: 12 [-Rpass-analysis=kernel-resource-usage]\n";
  const auto r = hip::parse_resource_usage(log);
  REQUIRE(r["kernels"].size() == 2);
  CHECK(r["kernels"][0]["name"] == "_Z16colsum_referencePKfPfii");
  CHECK(r["kernels"][0]["sgprs"] == 14);
  CHECK(r["kernels"][0]["vgprs"] == 21);
  CHECK(r["kernels"][0]["lds_bytes"] == 8192);
  CHECK(r["kernels"][0]["occupancy_waves"] == 8);
  CHECK(r["kernels"][1]["scratch_bytes"] == 64);
  CHECK(r["max_vgprs"] == 256);
  CHECK(r["spill_count"] == 14);
  CHECK(hip::parse_resource_usage("no remarks here\n")["kernels"].empty());
}

TEST_CASE("hip problems: kind hip loads, every space renders valid points") {
  int problems = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(KMCTS_SOURCE_DIR) / "problems/hip")) {
    if (!entry.is_directory()) continue;
    CAPTURE(entry.path().string());
    const Problem p = load_problem(entry.path());
    CHECK(p.kind == "hip");
    REQUIRE(p.space);
    CHECK(p.seed_source.find("kmcts_hip_kernel") != std::string::npos);
    CHECK(p.reference_source.find("kmcts_hip_kernel") != std::string::npos);
    ++problems;
  }
  CHECK(problems >= 3);
}

#ifdef KMCTS_TEST_HIPCC
namespace {

// The default point, and for every value of every parameter a valid point that takes it (the
// default with that value where valid, else the first valid point that has it): every value
// of the space compiled at least once.
std::vector<SpacePoint> covering_points(const TunableSpace& space) {
  std::vector<SpacePoint> out{space.default_point()};
  std::set<std::string> seen{TunableSpace::to_json(space.default_point()).dump()};
  for (const auto& param : space.params())
    for (const auto& value : param.values) {
      SpacePoint point = space.default_point();
      point[param.name] = value;
      if (!space.valid(point)) {
        std::optional<SpacePoint> found;
        space.for_each_point([&](const SpacePoint& q) {
          if (!found && q.at(param.name) == value) found = q;
        });
        if (!found) continue;
        point = *found;
      }
      if (seen.insert(TunableSpace::to_json(point).dump()).second) out.push_back(point);
    }
  return out;
}

}  // namespace

TEST_CASE("hip problems: every reference and every value of every space compiles with hipcc for gfx90a") {
  const fs::path cache = kmcts::test::fresh_dir("hip-build");
  // gfx90a (MI200): Debian's hipcc (ROCm 5.2, clang 15) stops before gfx942 (MI300).
  KernelCompiler compiler(CompilerSettings{KMCTS_TEST_HIPCC, cache, 300, 8192, {}}, hip::hip_compiler_flavor("gfx90a"),
                          "evaluator.hip.hipcc");
  int built = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(KMCTS_SOURCE_DIR) / "problems/hip")) {
    if (!entry.is_directory()) continue;
    CAPTURE(entry.path().string());
    const Problem p = load_problem(entry.path());
    BuildResult reference = compiler.compile(p.reference_source);
    CHECK_MESSAGE(reference.ok, reference.log);
    for (const SpacePoint& point : covering_points(*p.space)) {
      CAPTURE(TunableSpace::to_json(point).dump());
      BuildResult b = compiler.compile(p.space->render(*p.template_source, point));
      CHECK_MESSAGE(b.ok, b.log);
      if (!b.ok) continue;
      CHECK(b.resources["kernels"].size() >= 1);
      CHECK(b.resources["max_vgprs"].get<int>() > 0);
      ++built;
    }
  }
  CHECK(built >= 30);
  // A compile error is a result with hipcc's message, naming the file agents see.
  BuildResult broken = compiler.compile("#include \"kmcts_hip.h\"\nthis is not HIP;\n");
  CHECK_FALSE(broken.ok);
  CHECK(broken.log.find("kernel.hip") != std::string::npos);
  fs::remove_all(cache);
}
#endif

TEST_CASE("rocminfo: GPU agents with arch, product and compute units; CPU agents and ISA names left out") {
  const std::string text = read_file(fs::path(KMCTS_SOURCE_DIR) / "tests/fixtures/rocminfo/two-agents.txt");
  const auto gpus = hip::parse_rocminfo(text);
  REQUIRE(gpus.size() == 1);
  CHECK(gpus[0].arch == "gfx942");
  CHECK(gpus[0].name == "AMD Instinct MI300X");
  CHECK(gpus[0].compute_units == 304);
  CHECK(hip::parse_rocminfo("").empty());
  CHECK(hip::parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n").empty());
}
