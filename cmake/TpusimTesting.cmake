# tpusim_add_test(NAME <name> SOURCES <files...> LIBS <targets...>)
# One GoogleTest executable; each TEST becomes its own CTest test (gtest_discover_tests), labelled with
# the layer so `ctest -L isa` runs one layer. Tests run from the source tree root so they can name
# files such as configs/tpu-v4.yaml and tests/data/... by relative path.
function(tpusim_add_test)
  cmake_parse_arguments(T "" "NAME;LABEL" "SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  tpusim_set_warnings(${T_NAME})
  set(label ${T_LABEL})
  if(NOT label)
    set(label unit)
  endif()
  gtest_discover_tests(${T_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS ${label} ENVIRONMENT "TPUSIM_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()
