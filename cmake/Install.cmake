# What `cmake --install` puts under the prefix besides cli/'s binary, man page and completions,
# and the Debian package `cpack -G DEB` builds from the same install (README.md, "Install on
# a cluster"; tests/install/package_test.cc checks both).
#
#   <prefix>/share/denpex/scenarios   the shipped scenarios and suites (`denpex eval
#                                     scenarios/smoke` from any directory: cli/src/install.cc)
#   <prefix>/share/denpex/corpora     corpora/real, the frozen incidents the real suite names
#                                     (not real2/: its checkpoints are sparse files of 78 MB)
#   <prefix>/share/doc/denpex         README.md and docs/
install(DIRECTORY scenarios DESTINATION ${CMAKE_INSTALL_DATADIR}/denpex)
install(DIRECTORY corpora/real DESTINATION ${CMAKE_INSTALL_DATADIR}/denpex/corpora)
install(FILES corpora/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/denpex/corpora)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# The Debian package: /usr/bin/denpex and the rest under /usr. Its Depends are what
# dpkg-shlibdeps finds the binary links (protobuf, oneTBB, zlib, xz, zstd, libstdc++, libc), so
# `apt install ./denpex_<version>_<arch>.deb` pulls exactly those on a fresh Debian 12.
set(CPACK_PACKAGE_NAME denpex)
set(CPACK_PACKAGE_VENDOR "Denpex")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # denpex_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Denpex developers")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The summary line is CPACK_PACKAGE_DESCRIPTION_SUMMARY; CPack indents these lines.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "When a training job with thousands of ranks dies, denpex orders the evidence across
ranks, names the rank that stopped first (also when it printed nothing), groups the
cascade under one incident and says what must be true before resuming. It also
simulates such failures with ground truth and scores diagnoses against it.")
set(CPACK_GENERATOR DEB)
include(CPack)
