#include "sim/report/TimelineWriter.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/core/Error.h"
#include "sim/report/ResultsFile.h"

namespace fabricsim {

namespace {
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }
/// Microseconds with picosecond precision (6 decimals).
std::string micros(Time t) {
  char buf[32];
  const int64_t ps = t.picos();
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(ps / 1'000'000),
                static_cast<long long>(ps % 1'000'000));
  return buf;
}
}  // namespace

void TimelineWriter::processName(uint32_t pid, const std::string& name) {
  events_.push_back("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
                    ",\"args\":{\"name\":" + quoted(name) + "}}");
}

void TimelineWriter::threadName(uint32_t pid, uint32_t tid, const std::string& name) {
  events_.push_back("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
                    ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":" + quoted(name) + "}}");
  events_.push_back("{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
                    ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"sort_index\":" + std::to_string(tid) + "}}");
}

void TimelineWriter::span(uint32_t pid, uint32_t tid, const std::string& name, const std::string& category, Time start,
                          Time end, const std::string& args) {
  std::string e = "{\"name\":" + quoted(name) + ",\"cat\":" + quoted(category) + ",\"ph\":\"X\",\"ts\":" +
                  micros(start) + ",\"dur\":" + micros(end - start) + ",\"pid\":" + std::to_string(pid) +
                  ",\"tid\":" + std::to_string(tid);
  if (!args.empty()) e += ",\"args\":" + args;
  e += "}";
  events_.push_back(std::move(e));
  ++spans_;
}

void TimelineWriter::write(const std::string& path) const {
  ResultsFile::writeWith(path, [&](std::ostream& out) {
    out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    for (size_t i = 0; i < events_.size(); ++i) out << events_[i] << (i + 1 < events_.size() ? ",\n" : "\n");
    out << "]}\n";
  });
}

}  // namespace fabricsim
