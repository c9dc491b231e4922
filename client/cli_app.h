// The voxcol CLI's command line (CLI11): the global options, every subcommand with its own
// options and --help, and the function each subcommand runs.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

#include "client/voxcol_client.h"

namespace voxcol::client {

// What a subcommand runs once the command line is parsed (null: it needs no connection).
using CommandFn = std::function<int(Client&)>;

struct CliApp {
  CLI::App app{"voxcol: command-line client for a voxcol server", "voxcol"};
  std::map<const CLI::App*, CommandFn> commands;
};

// Declares every option and subcommand of `cli`, bound to Flags(). The runners of info, health,
// loadtest (cli_main.cc) and render (cli_render.cc) are passed in.
void BuildApp(CliApp& cli, CommandFn info, CommandFn health, CommandFn loadtest, CommandFn render);

// When the command word of argv is no command: "unknown command 'W'; did you mean C?" naming
// the closest commands by edit distance (or a pointer to --help); empty when the word is a
// command or there is none.
std::string UnknownCommandMessage(const CLI::App& app, int argc, char** argv);

// A bash completion script for every subcommand and its options (`voxcol completion`).
std::string BashCompletion(const CLI::App& app);

}  // namespace voxcol::client
