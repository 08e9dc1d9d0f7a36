# tpusim_set_warnings(target): the project's warning set, -Werror under TPUSIM_WERROR (CI).
add_library(tpusim_warnings INTERFACE)
target_compile_options(tpusim_warnings INTERFACE -Wall -Wextra -Wpedantic)
if(TPUSIM_WERROR)
  target_compile_options(tpusim_warnings INTERFACE -Werror)
endif()
if(TPUSIM_SANITIZE)
  target_compile_options(tpusim_warnings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                   -fno-sanitize-recover=undefined)
  target_link_options(tpusim_warnings INTERFACE -fsanitize=address,undefined)
endif()
# Fuzzing (tests/fuzz, scripts/fuzz.sh): coverage instrumentation for libFuzzer plus ASan + UBSan on
# every target, so a fuzz target's findings can be in any layer it calls.
if(TPUSIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TPUSIM_FUZZ needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  target_compile_options(tpusim_warnings INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                                                   -fno-omit-frame-pointer
                                                   -fno-sanitize-recover=undefined)
  target_link_options(tpusim_warnings INTERFACE -fsanitize=address,undefined)
endif()

function(tpusim_set_warnings target)
  target_link_libraries(${target} PRIVATE tpusim_warnings)
endfunction()
