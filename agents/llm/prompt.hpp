#pragma once
// Prompt templates: text files with {{name}} placeholders (configs/prompts/<role>.md). A
// template is checked when it is loaded, at start-up: a placeholder the role does not
// provide is an InputError naming the file and the placeholder, so a typo never reaches a
// paid model as a literal "{{tirde}}".
#include <filesystem>
#include <map>
#include <set>
#include <string>

namespace kmcts::llm {

class PromptTemplate {
 public:
  /// Loads `file`; every placeholder must be one of `known`, and every one of `required` must
  /// appear (a coder prompt without {{plan}} would ask for nothing). InputError otherwise, or
  /// if the file cannot be read.
  static PromptTemplate load(const std::filesystem::path& file, const std::set<std::string>& known,
                             const std::set<std::string>& required = {});
  /// From text (`origin` names it in errors).
  static PromptTemplate parse(const std::string& text, const std::string& origin, const std::set<std::string>& known,
                              const std::set<std::string>& required = {});

  /// Substitutes every placeholder; a value missing from `values` is a std::logic_error
  /// (the role promised it when the template was loaded).
  std::string render(const std::map<std::string, std::string>& values) const;
  const std::set<std::string>& placeholders() const { return used_; }

 private:
  std::string origin_;
  std::string text_;
  std::set<std::string> used_;
};

/// The folder of the shipped prompt templates (configs/prompts in the source tree).
std::filesystem::path default_prompt_dir();

}  // namespace kmcts::llm
