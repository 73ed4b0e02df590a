// A file truncated under its mapping must not kill the engine. Touching a mapped page that lies
// wholly past a file's end raises SIGBUS (a live job's log truncated with `> file`, or rotated
// by copytruncate, while `denpex diagnose` reads it). FileText registers each mapping here; a
// SIGBUS handler, installed once and chained to the handler it replaced, maps anonymous zero
// pages (MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS) over the faulting page and the rest of the
// mapping when the fault address lies inside a registered mapping, and notes the lowest faulting
// offset; the faulting read then goes on and reads NUL bytes. A fault anywhere else goes to the
// previous handler (by default: the process dies with SIGBUS, as before). A page the kernel
// cannot read from the file (an I/O error) raises the same SIGBUS and is handled the same way.
//
// The registry is a fixed array of slots read by the handler with lock-free atomics only (each
// slot a seqlock written by its owner; the handler skips a slot whose sequence is odd or
// changed), so it is async-signal-safe. The hot path pays nothing: one registration per mapped
// file, no check per line or page.
#pragma once

#include <cstddef>
#include <cstdint>

namespace denpex::engine {

// Mappings registered at once beyond this are not guarded (FileText reads the file instead).
inline constexpr int kGuardSlots = 1024;

// Guards [begin, begin + length) (a mapping of a file, read-only); installs the handler on
// first use. Returns the slot, or -1 when every slot is taken or the handler cannot be installed.
int GuardMapping(const void* begin, std::size_t length);

// Forgets the slot (before the mapping is unmapped); -1 is ignored.
void UnguardMapping(int slot);

// The lowest offset into the slot's mapping of a page that faulted past the file's end (from
// there to the mapping's end now reads as NUL bytes); SIZE_MAX when none did, or slot is -1.
std::size_t FirstFaultOffset(int slot);

}  // namespace denpex::engine
