// The server's logging flags (--log_format, --log_level), gRPC's own log lines routed into the
// server log, and the --version text (issue 40).
#pragma once

#include <string>

#include "absl/status/status.h"

namespace voxcol::server {

// Applies --log_format and --log_level (call right after flag parsing, before other threads log)
// and routes gRPC's and libprotobuf's own log lines into the server log as `event=grpc` and
// `event=protobuf`, at their level. An unknown
// value is INVALID_ARGUMENT naming the flag.
absl::Status ApplyLogFlags();

// What `--version` prints for `program`: "<program> <version> (revision <git revision>)".
std::string VersionText(const std::string& program);

// Answers --help, -h and --helpfull (the flags of files under `help_prefix`, or all) and
// --version on stdout and returns true (the caller exits 0: asking is not an error, while absl
// exits 1 after help); false for anything else.
bool AnswerHelpOrVersion(int argc, char** argv, const std::string& program,
                         const std::string& help_prefix);

}  // namespace voxcol::server
