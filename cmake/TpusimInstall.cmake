# `cmake --install BUILD [--prefix P]`: the tpusim command (bin/), its man page (share/man/man1, when
# help2man is installed), the chip configs (share/tpusim/configs, where the installed binary finds
# them), the headers (include/tpusim/<layer>/...) and the libraries with a CMake package, so that
# another project links them with
#   find_package(tpusim REQUIRED)
#   target_link_libraries(app PRIVATE tpusim::tpusim_sim)   # or tpusim_compiler, tpusim_driver, ...
# (tested by tests/install/consumer).
include(CMakePackageConfigHelpers)

set(TPUSIM_LIBRARIES tpusim_common tpusim_config tpusim_isa tpusim_hlo tpusim_eval tpusim_compiler
    tpusim_device_literal tpusim_spmd_check tpusim_mxu tpusim_sim tpusim_driver)

install(TARGETS tpusim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# tpusim_warnings (cmake/TpusimWarnings.cmake) is a private, link-only dependency of each library:
# exported with them so the package is complete (a consumer gets none of its compile options).
install(TARGETS ${TPUSIM_LIBRARIES} tpusim_warnings EXPORT tpusimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(layer common config isa hlo compiler sim driver)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpusim
          FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tpusim/configs
        FILES_MATCHING PATTERN "*.yaml")
install(EXPORT tpusimTargets NAMESPACE tpusim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpusim)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tpusimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tpusimConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpusim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tpusimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tpusimConfig.cmake ${PROJECT_BINARY_DIR}/tpusimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tpusim)

# The man page, from `tpusim --help` and `--version` (Debian help2man).
find_program(HELP2MAN_PROGRAM help2man)
if(HELP2MAN_PROGRAM)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/tpusim.1
    COMMAND ${HELP2MAN_PROGRAM} --no-info --section=1
            --name="cycle-level simulator of TPU-style chips running XLA HLO"
            --output=${PROJECT_BINARY_DIR}/tpusim.1 $<TARGET_FILE:tpusim>
    DEPENDS tpusim VERBATIM)
  add_custom_target(tpusim_man ALL DEPENDS ${PROJECT_BINARY_DIR}/tpusim.1)
  install(FILES ${PROJECT_BINARY_DIR}/tpusim.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
