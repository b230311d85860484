#include "reports/plots.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/rng.hpp"
#include "hardware/sandbox.hpp"

namespace kmcts {
namespace fs = std::filesystem;

std::string scope_slug(const Scope& scope) {
  if (scope.all_problems) return "all";
  std::string slug = scope.name;
  for (char& c : slug)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return slug;
}

namespace {

// Colour-blind-safe qualitative palette (Okabe & Ito); a configuration past the eighth
// repeats a colour with another dash pattern.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr size_t kColours = std::size(kPalette);

std::string colour(size_t i) { return kPalette[i % kColours]; }
int dash(size_t i) { return static_cast<int>(i / kColours) + 1; }

// A gnuplot double-quoted string.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

size_t metric_index(const GridReport& r, const std::string& key) {
  for (size_t m = 0; m < r.metrics.size(); ++m)
    if (r.metrics[m].key == key) return m;
  throw std::logic_error("no report metric " + key);
}

std::string number(double x) { return std::isfinite(x) ? fmt::format("{:.6g}", x) : "NaN"; }

// The part every script shares: PNG first; the SVG is the same plot replayed on another terminal.
std::string script_head(const std::string& name, const std::string& title, const std::string& xlabel,
                        const std::string& ylabel) {
  return fmt::format(
      "# Written by kmcts report; edit and run `gnuplot {0}.gp` in this folder to redraw.\n"
      "set terminal pngcairo size 1100,680 font \"DejaVu Sans,13\" noenhanced\n"
      "set output \"{0}.png\"\n"
      "set title {1}\nset xlabel {2}\nset ylabel {3}\n"
      "set grid lc rgb \"#dddddd\"\nset border 3\nset tics nomirror\nset key outside right top\n",
      name, quoted(title), quoted(xlabel), quoted(ylabel));
}

std::string script_tail(const std::string& name) {
  return fmt::format(
      "set terminal svg size 1100,680 dynamic font \"DejaVu Sans,13\" noenhanced\n"
      "set output \"{0}.svg\"\nreplot\nunset output\n",
      name);
}

struct Script {
  std::string scope;  // Scope::name
  std::string name;   // KIND_SLUG
  std::string title;
  std::string text;
  std::string data;
};

// Configurations present in the scope, in grid order.
std::vector<std::string> present(const GridReport& r, const Scope& scope) {
  std::vector<std::string> out;
  for (const std::string& c : r.configs)
    if (scope.by_config.count(c) && !scope.by_config.at(c).empty()) out.push_back(c);
  return out;
}

std::string scope_title(const Scope& scope) { return scope.all_problems ? "all problems (geometric mean)" : scope.name; }

Script curve_script(const GridReport& r, size_t s) {
  const Scope& scope = r.scopes[s];
  Script out{scope.name, "curve_" + scope_slug(scope), "", "", ""};
  out.title = "best-so-far speedup, " + scope.name;
  out.text = script_head(out.name, "Best speedup so far: " + scope_title(scope), "evaluations",
                         "best speedup over the reference (x)");
  out.text += "set style fill transparent solid 0.15 noborder\nset xrange [1:*]\n";
  std::string plot = "plot ";
  size_t block = 0;
  for (const std::string& config : present(r, scope)) {
    const CurveBand& band = r.stats[s].curves.at(config);
    const size_t i = static_cast<size_t>(std::find(r.configs.begin(), r.configs.end(), config) - r.configs.begin());
    out.data += fmt::format("# {} ({} seeds): evaluations mean lo hi\n", config, scope.by_config.at(config).size());
    for (size_t k = 0; k < band.mean.size(); ++k)
      out.data += fmt::format("{} {} {} {}\n", k + 1, number(band.mean[k]), number(band.lo[k]), number(band.hi[k]));
    out.data += "\n\n";
    const std::string file = block == 0 ? quoted("data/" + out.name + ".dat") : "\"\"";
    plot += fmt::format(
        "{}{} index {} using 1:3:4 with filledcurves fc rgb \"{}\" notitle, \\\n"
        "  \"\" index {} using 1:2 with lines lw 2.5 dt {} lc rgb \"{}\" title {}",
        block ? ", \\\n  " : "", file, block, colour(i), block, dash(i), colour(i), quoted(config));
    ++block;
  }
  out.text += plot + "\n" + script_tail(out.name);
  return out;
}

std::string config_xtics(const std::vector<std::string>& configs) {
  std::string tics = "set xtics (";
  for (size_t j = 0; j < configs.size(); ++j) tics += fmt::format("{}{} {}", j ? ", " : "", quoted(configs[j]), j);
  return tics + ") rotate by -25 left\n";
}

Script final_script(const GridReport& r, size_t s) {
  const Scope& scope = r.scopes[s];
  Script out{scope.name, "final_" + scope_slug(scope), "", "", ""};
  out.title = "final speedups, " + scope.name;
  const auto configs = present(r, scope);
  out.text = script_head(out.name, "Final speedup per seed: " + scope_title(scope), "",
                         "final best speedup over the reference (x)");
  out.text += fmt::format("set key off\nset xrange [-0.6:{}]\nset boxwidth 0.5\nset style boxplot nooutliers\n"
                          "set style fill solid 0.25 border\nset bmargin 6\n",
                          static_cast<double>(configs.size()) - 0.4);
  out.text += config_xtics(configs);
  const size_t final = metric_index(r, "final");
  CounterRng jitter(kBootstrapSeed, string_key("kmcts.report.jitter"));  // fixed: redraws look the same
  std::string plot = "plot ";
  for (size_t j = 0; j < configs.size(); ++j) {
    const size_t i = static_cast<size_t>(std::find(r.configs.begin(), r.configs.end(), configs[j]) - r.configs.begin());
    out.data += fmt::format("# {}: seed final_speedup x_position\n", configs[j]);
    for (const SeedValues& v : scope.by_config.at(configs[j]))
      out.data += fmt::format("{} {} {}\n", v.seed, number(v.metrics[final].value),
                              number(static_cast<double>(j) + 0.3 * (jitter.uniform() - 0.5)));
    out.data += "\n\n";
    const std::string file = j == 0 ? quoted("data/" + out.name + ".dat") : "\"\"";
    plot += fmt::format(
        "{}{} index {} using ({}):2 with boxplot lc rgb \"{}\", \\\n"
        "  \"\" index {} using 3:2 with points pt 7 ps 1.3 lc rgb \"{}\"",
        j ? ", \\\n  " : "", file, j, j, colour(i), j, colour(i));
  }
  out.text += plot + "\n" + script_tail(out.name);
  return out;
}


struct CostAxis {
  std::string kind;  // cost_wall, cost_gpu, cost_tokens
  std::string metric;
  std::string label;
};

// Whether any run of the grid spent this cost (tokens of offline agents are all 0).
bool any_cost(const GridReport& r, size_t m) {
  for (size_t s = 1; s < r.scopes.size(); ++s)
    for (const auto& [config, seeds] : r.scopes[s].by_config)
      for (const SeedValues& v : seeds)
        if (v.metrics[m].value > 0) return true;
  return false;
}

Script cost_script(const GridReport& r, size_t s, const CostAxis& axis) {
  const Scope& scope = r.scopes[s];
  Script out{scope.name, axis.kind + "_" + scope_slug(scope), "", "", ""};
  out.title = axis.label + " against final speedup, " + scope.name;
  const std::string per = scope.all_problems ? " (mean over problems per seed)" : " per run";
  out.text = script_head(out.name, "Cost and result: " + scope_title(scope), axis.label + per,
                         "final best speedup over the reference (x)");
  out.text += "set offsets graph 0.04, graph 0.04, graph 0.06, graph 0.06\n";  // no point on the frame
  const size_t final = metric_index(r, "final"), cost = metric_index(r, axis.metric);
  std::string plot = "plot ";
  size_t block = 0;
  for (const std::string& config : present(r, scope)) {
    const size_t i = static_cast<size_t>(std::find(r.configs.begin(), r.configs.end(), config) - r.configs.begin());
    out.data += fmt::format("# {}: seed {} final_speedup\n", config, axis.metric);
    for (const SeedValues& v : scope.by_config.at(config))
      out.data += fmt::format("{} {} {}\n", v.seed, number(v.metrics[cost].value), number(v.metrics[final].value));
    out.data += "\n\n";
    const std::string file = block == 0 ? quoted("data/" + out.name + ".dat") : "\"\"";
    plot += fmt::format("{}{} index {} using 2:3 with points pt {} ps 1.6 lc rgb \"{}\" title {}", block ? ", \\\n  " : "",
                        file, block, 5 + 2 * static_cast<int>(i % 5), colour(i), quoted(config));
    ++block;
  }
  out.text += plot + "\n" + script_tail(out.name);
  return out;
}

std::vector<Script> scripts_of(const GridReport& r) {
  const std::vector<CostAxis> axes = {{"cost_wall", "wall_s", "wall time (s)"},
                                      {"cost_gpu", "gpu_s",
                                       (r.timed_on.empty() ? std::string("measurement") : r.timed_on) + " time (s)"},
                                      {"cost_tokens", "tokens", "tokens"}};
  std::vector<Script> scripts;
  for (size_t s = 0; s < r.scopes.size(); ++s) {
    if (present(r, r.scopes[s]).empty()) continue;
    scripts.push_back(curve_script(r, s));
    scripts.push_back(final_script(r, s));
    for (const CostAxis& axis : axes)
      if (axis.metric == "wall_s" || any_cost(r, metric_index(r, axis.metric))) scripts.push_back(cost_script(r, s, axis));
  }
  return scripts;
}

}  // namespace

PlotResult write_plots(const GridReport& r, const fs::path& dir, const std::string& gnuplot) {
  fs::create_directories(dir / "data");
  PlotResult result;
  const std::vector<Script> scripts = scripts_of(r);
  for (const Script& script : scripts) {
    write_file_atomic(dir / "data" / (script.name + ".dat"), script.data);
    write_file_atomic(dir / (script.name + ".gp"), script.text);
  }
  SandboxLimits limits;
  limits.timeout_s = 60;  // a figure takes well under a second; a hang must not stall the report
  for (const Script& script : scripts) {
    const SandboxResult run = run_sandboxed({gnuplot, script.name + ".gp"}, limits, dir);
    if (!run.started && run.error.find("not found") != std::string::npos) {
      result.figures.clear();
      result.message = fmt::format("{} not found: wrote the plot data and scripts to {} but no figures "
                                   "(apt-get install gnuplot-nox, then run the .gp scripts there)",
                                   gnuplot, dir.string());
      return result;
    }
    if (!run.exited_cleanly())
      throw RunError(fmt::format("gnuplot failed on {}: {}", (dir / (script.name + ".gp")).string(),
                                 run.started ? run.err.substr(0, run.err.find('\n')) : run.error));
    for (const char* ext : {".png", ".svg"})
      if (!fs::exists(dir / (script.name + ext)) || fs::file_size(dir / (script.name + ext)) == 0)
        throw RunError(fmt::format("gnuplot wrote no {} for {}", ext, (dir / (script.name + ".gp")).string()));
    result.figures.push_back({script.scope, script.title, script.name + ".png"});
  }
  result.rendered = true;
  return result;
}

}  // namespace kmcts
