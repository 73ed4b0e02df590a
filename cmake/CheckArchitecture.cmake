# Fails the configure step when a library links something the architecture forbids
# (DESIGN.md "Hard rules"). Include dirs are per target, so a library can only include
# the headers of what it links: checking links is checking includes.
function(denpex_forbid_link target)
  get_target_property(links ${target} LINK_LIBRARIES)
  foreach(forbidden IN LISTS ARGN)
    if(forbidden IN_LIST links)
      message(FATAL_ERROR "architecture: ${target} must not link ${forbidden} (see docs/architecture.md)")
    endif()
  endforeach()
endfunction()

function(denpex_allow_only_links target)
  get_target_property(links ${target} LINK_LIBRARIES)
  foreach(lib IN LISTS links)
    if(lib MATCHES "^denpex_" AND NOT lib STREQUAL "denpex_warnings" AND NOT lib IN_LIST ARGN)
      message(FATAL_ERROR "architecture: ${target} may link only ${ARGN}, not ${lib}")
    endif()
  endforeach()
endfunction()

denpex_forbid_link(denpex_engine denpex_sim denpex_scorer)
denpex_allow_only_links(denpex_engine denpex_common denpex_proto denpex_warnings)
denpex_allow_only_links(denpex_scorer denpex_common denpex_proto denpex_warnings)
denpex_allow_only_links(denpex_sim denpex_common denpex_proto denpex_warnings)
denpex_allow_only_links(denpex_proto denpex_common)
denpex_allow_only_links(denpex_common)
