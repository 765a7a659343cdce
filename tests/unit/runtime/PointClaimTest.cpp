// PointClaim: one holder at a time; the claim ends with its holder, however the holder ends.
#include "sim/runtime/PointClaim.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "tests/support/TempDir.h"

namespace fabricsim {
namespace {

TEST(PointClaim, ASecondClaimFailsWhileTheFirstIsHeldAndSucceedsAfter) {
  testsupport::TempDir dir;
  const std::string path = dir.file("claim.lock");
  auto first = PointClaim::tryClaim(path);
  ASSERT_TRUE(first.has_value());
  std::string holder;
  EXPECT_FALSE(PointClaim::tryClaim(path, &holder).has_value());
  EXPECT_NE(holder.find("pid " + std::to_string(getpid())), std::string::npos) << holder;
  first.reset();
  EXPECT_TRUE(PointClaim::tryClaim(path).has_value());
}

TEST(PointClaim, AKilledHoldersClaimIsFree) {
  testsupport::TempDir dir;
  const std::string path = dir.file("claim.lock");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto claim = PointClaim::tryClaim(path);
    const char c = claim ? 'y' : 'n';
    [[maybe_unused]] const ssize_t w = write(ready[1], &c, 1);
    pause();  // held until killed
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  std::string holder;
  EXPECT_FALSE(PointClaim::tryClaim(path, &holder).has_value());
  EXPECT_NE(holder.find("pid " + std::to_string(child)), std::string::npos) << holder;
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(PointClaim::tryClaim(path).has_value()) << "no cleanup is needed after SIGKILL";
  close(ready[0]);
  close(ready[1]);
}

}  // namespace
}  // namespace fabricsim
