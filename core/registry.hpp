#pragma once
// Implementations register under a name; a config picks one by string.
// An unknown name is an InputError that lists the known ones.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace kmcts {

template <class Interface, class... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Interface>(Args...)>;

  static Registry& instance() {
    static Registry registry;
    return registry;
  }

  /// Returns true so it can initialise a static (see KMCTS_REGISTER).
  bool add(const std::string& name, Factory factory) {
    std::lock_guard lock(mutex_);
    factories_[name] = std::move(factory);
    return true;
  }

  std::unique_ptr<Interface> create(const std::string& kind, const std::string& name, Args... args) const {
    Factory factory;
    {
      std::lock_guard lock(mutex_);
      auto it = factories_.find(name);
      if (it == factories_.end()) throw InputError(unknown_message(kind, name));
      factory = it->second;
    }
    return factory(std::forward<Args>(args)...);
  }

  std::vector<std::string> names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [name, _] : factories_) out.push_back(name);
    return out;
  }

  bool contains(const std::string& name) const {
    std::lock_guard lock(mutex_);
    return factories_.count(name) != 0;
  }

  /// The InputError create() would throw for an unknown name, without creating anything.
  void check(const std::string& kind, const std::string& name) const {
    std::lock_guard lock(mutex_);
    if (factories_.count(name) == 0) throw InputError(unknown_message(kind, name));
  }

 private:
  std::string unknown_message(const std::string& kind, const std::string& name) const {
    std::string known;
    for (const auto& [n, _] : factories_) known += (known.empty() ? "" : ", ") + n;
    return "unknown " + kind + " '" + name + "' (known: " + known + ")";
  }

  mutable std::mutex mutex_;
  std::map<std::string, Factory> factories_;
};

}  // namespace kmcts

#define KMCTS_CONCAT_INNER(a, b) a##b
#define KMCTS_CONCAT(a, b) KMCTS_CONCAT_INNER(a, b)
/// KMCTS_REGISTER(RegistryType, "name", factory-lambda) at namespace scope in a .cpp.
#define KMCTS_REGISTER(RegistryType, name, ...)                                             \
  namespace {                                                                               \
  [[maybe_unused]] const bool KMCTS_CONCAT(kmcts_registered_, __LINE__) =                   \
      RegistryType::instance().add(name, __VA_ARGS__);                                      \
  }
