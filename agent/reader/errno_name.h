// ErrnoName: the symbolic name of an errno value ("EACCES"), the form in which the agent records a failed
// node (capture trees store it as `<path>.err`). Bionic has no strerrorname_np, hence a table.
//
//   NodeRead r;
//   r.errno_name = ErrnoName(errno);   // "ENOENT"; an unknown value gives "ERRNO_<n>"
//
// Pure and thread-safe.
#ifndef MEMFLEET_AGENT_READER_ERRNO_NAME_H_
#define MEMFLEET_AGENT_READER_ERRNO_NAME_H_

#include <string>
#include <string_view>

namespace memfleet::agent {

std::string ErrnoName(int errno_value);

}  // namespace memfleet::agent

#endif  // MEMFLEET_AGENT_READER_ERRNO_NAME_H_
