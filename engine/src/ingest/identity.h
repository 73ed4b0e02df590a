// Which node a file's lines belong to, from what the lines say (docs/log_formats.md §1): a
// file whose path names no node is the node of the one host its lines name as their own (an
// agent's ChildFailedError `host :`, NCCL's `host:pid:tid`, a syslog or pdsh prefix); a folder
// whose files' lines name one host (no other folder's name it) is that host, and one whose files
// name different hosts (one each), or whose file names several, or that holds node folders
// naming different hosts, is none: each file is its own host's. Two agents'
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
  // Per file: the node its folder gives it, else the one its name gives, where the folder is a
  // node's: not one whose files' lines name several machines (a folder of many pods' or agents'
  // logs under an opaque name, a job's whole console in a ticket's folder, the collection's
  // node folders below it), nor one inside another node's folder that no line names. Empty
  // when neither gives one.
  std::vector<std::string> path_node;
  // Hosts that only split agents' consoles name: each of those agents is a node of its own, the
  // host alone is not one.
  std::vector<std::string> split_hosts;
};

// What each file's path and name say of its node.
struct PathHints {
  std::vector<std::string>
      folder_node;  // the node its path names (walk.h NodeOfPath); empty when none
  // The node its name stands for (a pod log's pod, by its describe), taken where the folder gives
  // none; empty when none.
  std::vector<std::string> name_node;
  // 1 where the folder that gives `folder_node` holds every log of the incident and no line names
  // it as a host (a tarball's or a ticket's folder): that name is no machine's, and its files are
  // read as at the top level. Those whose lines give no node are one machine: the one node Slurm
  // ran the job on, else a node known by the folder only (`the node of <folder>/`).
  std::vector<char> wrapper;
};

FileIdentity IdentifyFiles(const PathHints& hints, const Incident& inc);

// The folder of `path` that gave it the node name `node` (walk.h NodeOfPath: the nearest folder so
// named); empty when none does.
inline std::string_view NodeFolder(std::string_view path, std::string_view node) {
  std::string_view folder = FolderOf(path);
  while (!folder.empty() && folder.substr(folder.rfind('/') + 1) != node) folder = FolderOf(folder);
  return folder;
}

// The machine a host name stands for: the name up to its first dot (`gpu-0001.cluster.local` and
// `gpu-0001` are one machine: torchrun's table prints socket.getfqdn(), NCCL, syslog and Slurm
// the short name); an IPv4 address whole.
std::string_view Machine(std::string_view host);

// The host a node label names: `node-a` for `node-a` and for a split agent's `node-a (agent with
// ranks 4-7)`; empty for an unnamed agent's `the node of <file>`. What initiator.node reports.
std::string_view NodeHost(std::string_view label);

// The index in Incident::nodes (sorted) of the node named `host`; -1 when no node has that name.
std::int32_t NodeOfHost(const Incident& inc, std::string_view host);

}  // namespace denpex::engine
