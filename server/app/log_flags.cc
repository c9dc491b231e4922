#include "server/app/log_flags.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/internal/program_name.h"
#include "absl/flags/internal/usage.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/version/version.h"
#include "server/telemetry/log.h"

ABSL_FLAG(std::string, log_format, "text",
          "Server log lines: text (`time LEVEL key=value ...`) or json (one object per line)");
ABSL_FLAG(std::string, log_level, "info",
          "Least severe level logged: info (every event and each failed call), warning (only "
          "WARN and ERROR: per-call lines and start-up detail are dropped) or error");

namespace voxcol::server {
namespace {

// gRPC's lines (its own, raw to stderr otherwise) as server log lines.
void RouteGrpcLine(gpr_log_func_args* args) {
  const char* level = args->severity == GPR_LOG_SEVERITY_ERROR ? "ERROR" : "INFO";
  LogLine(level, absl::StrCat("event=grpc file=", LogValue(args->file ? args->file : ""),
                              " line=", args->line,
                              " message=", LogValue(args->message ? args->message : "")));
}

// libprotobuf's lines (e.g. a request string field that is not UTF-8), raw to stderr otherwise.
void RouteProtobufLine(google::protobuf::LogLevel severity, const char* file, int line,
                       const std::string& message) {
  LogLine(severity >= google::protobuf::LOGLEVEL_ERROR     ? "ERROR"
          : severity == google::protobuf::LOGLEVEL_WARNING ? "WARN"
                                                           : "INFO",
          absl::StrCat("event=protobuf file=", LogValue(file ? file : ""), " line=", line,
                       " message=", LogValue(message)));
}

}  // namespace

absl::Status ApplyLogFlags() {
  const std::string format = absl::AsciiStrToLower(absl::GetFlag(FLAGS_log_format));
  const std::string level = absl::AsciiStrToLower(absl::GetFlag(FLAGS_log_level));
  LogFormat f;
  if (format == "text") {
    f = LogFormat::kText;
  } else if (format == "json") {
    f = LogFormat::kJson;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_format: '", format, "' is not text or json"));
  }
  LogLevel l;
  if (level == "info") {
    l = LogLevel::kInfo;
  } else if (level == "warning" || level == "warn") {
    l = LogLevel::kWarning;
  } else if (level == "error") {
    l = LogLevel::kError;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_level: '", level, "' is not info, warning or error"));
  }
  SetLogOptions(f, l);
  gpr_set_log_function(RouteGrpcLine);
  google::protobuf::SetLogHandler(RouteProtobufLine);
  return absl::OkStatus();
}

std::string VersionText(const std::string& program) {
  return absl::StrCat(program, " ", VersionString(), " (revision ", GitRevision(), ")\n");
}

bool AnswerHelpOrVersion(int argc, char** argv, const std::string& program,
                         const std::string& help_prefix) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--version" || arg == "-version") {
      std::cout << VersionText(program);
      return true;
    }
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpfull") {
      absl::flags_internal::SetProgramInvocationName(argv[0]);
      absl::flags_internal::FlagsHelp(std::cout, arg == "--helpfull" ? "" : help_prefix,
                                      absl::flags_internal::HelpFormat::kHumanReadable,
                                      absl::ProgramUsageMessage());
      return true;
    }
  }
  return false;
}

}  // namespace voxcol::server
