// Base fixture for integration tests that drive a real server with the real CLI.
#pragma once

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/server_process.h"

namespace voxcol::testing {

class CliFixture : public ::testing::Test {
 protected:
  // Runs the CLI against server_ with `args`; captures exit code, stdout and stderr.
  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {VOXCOL_CLI_PATH, "--server=" + server_.address()});
    return RunCommand(args, dir_.path());
  }

  // Runs the CLI with --json, expects success and parses stdout as `Message`.
  template <typename Message>
  Message CliJson(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Message m;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &m).ok()) << r.out;
    return m;
  }

  TempDir dir_;
  ServerProcess server_;
};

}  // namespace voxcol::testing
