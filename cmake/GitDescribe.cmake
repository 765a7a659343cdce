# Writes OUT, a header defining FABRICSIM_GIT as `git describe --always --dirty --tags` of SRC
# ("unknown" outside a git checkout). Run at every build (script mode); OUT is rewritten only
# when the description changes, so results name the commit the binary was built from, not the
# one CMake was first configured at.
execute_process(COMMAND git describe --always --dirty --tags
                WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE git OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT git)
  set(git "unknown")
endif()
file(WRITE ${OUT}.tmp "#define FABRICSIM_GIT \"${git}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
