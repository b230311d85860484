#include "hardware/remote/messages.hpp"

#include <fmt/format.h>

namespace kmcts::remote {

using json = nlohmann::json;

namespace {

constexpr int kMaxDepth = 64;

struct Field {
  const char* name;
  json::value_t type;  // number_unsigned also accepts a non-negative integer written as signed
};

std::vector<Field> required_fields(Tag tag) {
  using t = json::value_t;
  switch (tag) {
    case Tag::hello: return {{"version", t::string}, {"host", t::string}, {"pid", t::number_unsigned},
                             {"gpu_ids", t::string}, {"gpus", t::number_unsigned}};
    case Tag::welcome: return {{"heartbeat_s", t::number_float}, {"timeout_s", t::number_float}, {"devices", t::array},
                               {"slots", t::number_unsigned}};
    case Tag::problem: return {{"key", t::string}, {"name", t::string}, {"entry", t::string},
                               {"files", t::object}, {"config", t::object}};
    case Tag::job: return {{"id", t::number_unsigned}, {"key", t::string}, {"source", t::string}};
    case Tag::result: return {{"id", t::number_unsigned}, {"result", t::object}, {"device", t::number_unsigned},
                              {"busy_s", t::number_float}};
    case Tag::failure: return {{"id", t::number_unsigned}, {"message", t::string}};
    case Tag::heartbeat:
    case Tag::stop: return {};
  }
  return {};
}

bool has_type(const json& v, json::value_t type) {
  switch (type) {
    case json::value_t::number_unsigned: return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    case json::value_t::number_float: return v.is_number();
    default: return v.type() == type;
  }
}

const char* type_name(json::value_t type) {
  switch (type) {
    case json::value_t::string: return "a string";
    case json::value_t::number_unsigned: return "a non-negative integer";
    case json::value_t::number_float: return "a number";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a value";
  }
}

}  // namespace

const char* tag_name(int tag) {
  switch (static_cast<Tag>(tag)) {
    case Tag::hello: return "hello";
    case Tag::welcome: return "welcome";
    case Tag::problem: return "problem";
    case Tag::job: return "job";
    case Tag::result: return "result";
    case Tag::heartbeat: return "heartbeat";
    case Tag::failure: return "failure";
    case Tag::stop: return "stop";
  }
  return "unknown";
}

MessageError oversized(int source, int tag, size_t bytes, size_t max_bytes) {
  return MessageError(fmt::format("MPI message from rank {} (tag {} '{}') rejected: {} bytes, over the limit of {} "
                                  "(--mpi-max-message-mb)",
                                  source, tag, tag_name(tag), bytes, max_bytes),
                      source);
}

namespace {

Message checked(int source, int tag, std::string_view payload, size_t max_bytes) {
  const std::string where = fmt::format("MPI message from rank {} (tag {} '{}')", source, tag, tag_name(tag));
  if (std::string_view(tag_name(tag)) == "unknown") throw MessageError(where + " rejected: no message kind has this tag");
  if (payload.size() > max_bytes) throw oversized(source, tag, payload.size(), max_bytes);
  Message m{source, static_cast<Tag>(tag), {}};
  // Nesting is bounded: copying or printing a value nested 100,000 deep would overflow the
  // stack (nlohmann recurses), and no message of ours nests deeper than a few levels.
  bool too_deep = false;
  auto limit_depth = [&too_deep](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) too_deep = true;
    return !too_deep;
  };
  try {
    m.body = json::parse(payload, limit_depth);
  } catch (const json::exception& e) {  // syntax, and numbers out of range (1e999)
    throw MessageError(fmt::format("{} rejected: not JSON ({})", where, e.what()));
  }
  if (too_deep) throw MessageError(fmt::format("{} rejected: nested deeper than {} levels", where, kMaxDepth));
  if (!m.body.is_object()) throw MessageError(where + " rejected: the payload is not a JSON object");
  for (const Field& f : required_fields(m.tag)) {
    auto it = m.body.find(f.name);
    if (it == m.body.end()) throw MessageError(fmt::format("{} rejected: no '{}'", where, f.name));
    if (!has_type(*it, f.type))
      throw MessageError(fmt::format("{} rejected: '{}' is not {}", where, f.name, type_name(f.type)));
  }
  // Numbers rank 0 sizes things by.
  for (const char* key : {"gpus", "slots", "device"})
    if (m.body.contains(key) && m.body[key].is_number() && m.body[key].get<double>() > 4096)
      throw MessageError(fmt::format("{} rejected: '{}' is over 4096", where, key));
  if (m.body.contains("busy_s") && !(m.body["busy_s"].get<double>() >= 0))
    throw MessageError(fmt::format("{} rejected: 'busy_s' is negative", where));
  return m;
}

}  // namespace

Message decode(int source, int tag, std::string_view payload, size_t max_bytes) {
  try {
    return checked(source, tag, payload, max_bytes);
  } catch (const MessageError& e) {
    throw MessageError(e.what(), source);
  }
}

std::string encode(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace kmcts::remote
