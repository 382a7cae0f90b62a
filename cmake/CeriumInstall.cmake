# Installs headers, libraries and a CMake package: find_package(Cerium CONFIG REQUIRED) + Cerium::cerium.
include(CMakePackageConfigHelpers)
set(CERIUM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Cerium)

set(_cerium_targets cerium cerium_core cerium_math cerium_ring cerium_rlwe cerium_dist cerium_ckks cerium_io cerium_circuits cerium_boot cerium_expr
    cerium_plan cerium_graph cerium_nn)
if(CERIUM_HAS_CUDA)
  list(APPEND _cerium_targets cerium_cuda)
endif()
if(CERIUM_HAS_MPI)
  list(APPEND _cerium_targets cerium_dist_mpi)
endif()
install(TARGETS ${_cerium_targets} EXPORT CeriumTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/cerium DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/cerium/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cerium)
install(EXPORT CeriumTargets NAMESPACE Cerium:: DESTINATION ${CERIUM_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/CeriumConfig.cmake.in ${PROJECT_BINARY_DIR}/CeriumConfig.cmake
                              INSTALL_DESTINATION ${CERIUM_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CeriumConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/CeriumConfig.cmake ${PROJECT_BINARY_DIR}/CeriumConfigVersion.cmake
        DESTINATION ${CERIUM_INSTALL_CMAKEDIR})
