// The machine's memory as the engine sizes itself by it: physical memory and what the kernel
// says is available for new allocations now.
#pragma once

#include <cstdint>

namespace pagedchat {

/// Physical memory in bytes (sysconf _SC_PHYS_PAGES x _SC_PAGESIZE); 0 when it cannot be read.
std::uint64_t physical_memory_bytes();

/// Memory available for new allocations without swapping, in bytes: /proc/meminfo's
/// MemAvailable (the kernel's estimate: free memory plus reclaimable page cache and slabs), else
/// physical_memory_bytes() where there is no /proc/meminfo; 0 when neither can be read.
std::uint64_t available_memory_bytes();

}  // namespace pagedchat
