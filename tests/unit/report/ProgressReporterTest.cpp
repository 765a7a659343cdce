// ProgressReporter: a status line rewritten in place on a terminal, timestamped plain lines in a
// log, nothing when disabled.
#include "sim/report/ProgressReporter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>

namespace fabricsim {
namespace {

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

TEST(ProgressReporter, ALogGetsTimestampedLinesWithTheFiguresAndNoCarriageReturn) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressReporter p(true, false, std::chrono::milliseconds(0), f);
  p.update(Time::ms(2), 3'000'000, 0.25);
  p.update(Time::ms(4), 6'000'000, 0.5);
  p.finish();
  const std::string s = contents(f);
  std::fclose(f);
  EXPECT_EQ(s.find('\r'), std::string::npos) << s;
  // Two lines, each "YYYY-MM-DDTHH:MM:SSZ fabricsim: sim 2.000 ms | wall ... | 3.0 M events | ... | 25.0% |
  // ETA ...".
  const std::regex line(
      R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ fabricsim: sim (\d+\.\d{3}) ms \| wall \d+ s \| (\d+\.\d) M events \| [0-9.]+ M ev/s \| +([0-9.]+)% \| ETA [^\n]+\n)");
  auto it = std::sregex_iterator(s.begin(), s.end(), line);
  ASSERT_NE(it, std::sregex_iterator()) << s;
  EXPECT_EQ((*it)[1], "2.000");
  EXPECT_EQ((*it)[2], "3.0");
  EXPECT_EQ((*it)[3], "25.0");
  ++it;
  ASSERT_NE(it, std::sregex_iterator()) << s;
  EXPECT_EQ((*it)[1], "4.000");
  EXPECT_EQ((*it)[3], "50.0");
  EXPECT_EQ(++it, std::sregex_iterator());
}

TEST(ProgressReporter, ALogGetsAtMostOneLinePerInterval) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  // An hour between lines: the updates of a short run print nothing (the first line is due
  // after one interval, not at the start).
  ProgressReporter p(true, false, std::chrono::hours(1), f);
  for (int i = 0; i < 100; ++i) p.update(Time::us(i), static_cast<uint64_t>(i), i / 100.0);
  p.finish();
  EXPECT_EQ(contents(f), "");
  std::fclose(f);
}

TEST(ProgressReporter, ATerminalGetsOneLineRewrittenAndClearedAtTheEnd) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressReporter p(true, true, std::chrono::hours(1), f);
  p.update(Time::ms(1), 10, 0.1);
  p.update(Time::ms(2), 20, 0.2);
  p.finish();
  const std::string s = contents(f);
  std::fclose(f);
  EXPECT_EQ(s.find('\n'), std::string::npos) << s;
  EXPECT_NE(s.find("\r  sim 1.000 ms"), std::string::npos) << s;
  EXPECT_NE(s.find("\r  sim 2.000 ms"), std::string::npos) << s;
  EXPECT_EQ(s.back(), '\r');  // cleared: blanks, then back to the line's start
}

TEST(ProgressReporter, DisabledPrintsNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressReporter p(false, false, std::chrono::milliseconds(0), f);
  p.update(Time::ms(1), 10, 0.5);
  p.finish();
  EXPECT_EQ(contents(f), "");
  std::fclose(f);
}

}  // namespace
}  // namespace fabricsim
