// Which node a file's lines belong to, from what the lines say (docs/log_formats.md §1): a
// file whose path names no node is the node of the one host its lines name as their own (an
// agent's ChildFailedError `host :`, NCCL's `host:pid:tid`, a syslog or pdsh prefix); a folder
// whose files' lines name one host (no other folder's name it) is that host, and one whose files
// name different hosts (one each) is none: each file is its own host's. Two agents'
// consoles that name the same host are two agents (containers without distinct host names,
// several agents on one host): each is a node of its own, labelled by the ranks it holds. An
// agent's console that names no host is a node of its own, known by its file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "incident/incident.h"

namespace denpex::engine {

struct FileIdentity {
  // Per file: the node its lines give it (a host, or a label below); empty when they give none,
  // or name the node `path_node` names.
  std::vector<std::string> node;
  // Hosts that only split agents' consoles name: each of those agents is a node of its own, the
  // host alone is not one.
  std::vector<std::string> split_hosts;
  // Per file: its folder's files name different hosts (one each), so the folder is no node and
  // its name no hint: the file is the node its lines name, or none.
  std::vector<char> no_node_folder;
};

// `path_node`: per file, the node its path (or its pod's describe) names; empty when none.
FileIdentity IdentifyFiles(const std::vector<std::string>& path_node, const Incident& inc);

// The host a node label names: `node-a` for `node-a` and for a split agent's `node-a (agent with
// ranks 4-7)`; empty for an unnamed agent's `the node of <file>`. What initiator.node reports.
std::string_view NodeHost(std::string_view label);

// The index in Incident::nodes (sorted) of the node named `host`; -1 when no node has that name.
std::int32_t NodeOfHost(const Incident& inc, std::string_view host);

}  // namespace denpex::engine
