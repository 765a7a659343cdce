// Errors: user-input diagnostics that carry file, line, column and key path, and invariant
// checks for the simulator's own bugs.
//
// Models: InputError is what bad user input produces (exit status 2): one or more
// Diagnostics, each naming where the problem is and what was expected. SimError is an
// internal invariant violation (a bug), raised by SIM_CHECK, which is always on.
// SIM_DCHECK is for hot loops and compiles out under NDEBUG.
// Leaves out: warnings (reported separately by callers), localisation.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace fabricsim {

/// One problem in an input file. line and column are 1-based; 0 means unknown.
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;      ///< dotted key path, e.g. "links.host_speed"
  std::string message;  ///< what was expected and what was found

  /// "file:line:col: key: message"
  std::string format() const;
};

/// Bad user input: one or more diagnostics. Never a crash; the CLI prints them and exits 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diags);
  InputError(std::string file, int line, int column, std::string key, std::string message);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  static std::string join(const std::vector<Diagnostic>& d);
  std::vector<Diagnostic> diags_;
};

/// An internal invariant failed: a bug in fabricsim, not in the input.
class SimError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void checkFailed(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace fabricsim

#define SIM_CHECK(cond, msg)                                                     \
  do {                                                                           \
    if (!(cond)) ::fabricsim::checkFailed(#cond, __FILE__, __LINE__, (msg));     \
  } while (0)

#ifdef NDEBUG
#define SIM_DCHECK(cond, msg) \
  do {                        \
  } while (0)
#else
#define SIM_DCHECK(cond, msg) SIM_CHECK(cond, msg)
#endif
