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

function(tpusim_set_warnings target)
  target_link_libraries(${target} PRIVATE tpusim_warnings)
endfunction()
