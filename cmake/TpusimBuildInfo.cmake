# The build's identity (common/build_info.h): the project version and the git commit of the source
# tree, read when CMake configures. CMake re-configures when the checkout's HEAD or its reflog
# changes (a commit, checkout, rebase or merge), so the commit stays that of the tree being built.
# A tree that is not a git checkout (a source tarball) records "unknown".
set(TPUSIM_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND _commit MATCHES "^[0-9a-f]+$")
    set(TPUSIM_GIT_COMMIT "${_commit}")
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE _changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT _changes STREQUAL "")
      string(APPEND TPUSIM_GIT_COMMIT "-dirty")
    endif()
    foreach(_file HEAD logs/HEAD)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --path-format=absolute --git-path ${_file}
        WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
        OUTPUT_VARIABLE _path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_path AND EXISTS "${_path}")
        set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_path}")
      endif()
    endforeach()
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/common/build_info.cc.in
               ${PROJECT_BINARY_DIR}/generated/common/build_info.cc @ONLY)
