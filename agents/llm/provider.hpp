#pragma once
// The two provider families kmcts speaks (wire.hpp has their formats).
#include <string>

namespace kmcts::llm {

enum class Provider { openai, anthropic };
/// "openai" or "anthropic"; anything else is an InputError naming the option.
Provider provider_from_string(const std::string& name, const std::string& option);
const char* to_string(Provider p);

}  // namespace kmcts::llm
