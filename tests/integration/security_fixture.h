// Test certificates made with the openssl CLI at test time, a token file, and a fixture that starts
// the real server with them.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client/voxcol_client.h"
#include "tests/integration/server_process.h"

namespace voxcol::testing {

// A CA, a server certificate for localhost/127.0.0.1, a client certificate it signed, and a second
// (untrusted) CA with its own client certificate; all under `dir`.
inline bool MakeCertificates(const std::string& dir) {
  const std::string d = ShellQuote(dir);
  const std::string script =
      "set -e; cd " + d +
      ";"
      " openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2"
      "   -subj '/CN=voxcol test CA' >/dev/null 2>&1;"
      " openssl req -x509 -newkey rsa:2048 -nodes -keyout rogue-ca.key -out rogue-ca.crt -days 2"
      "   -subj '/CN=rogue CA' >/dev/null 2>&1;"
      " printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext;"
      " openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr"
      "   -subj '/CN=localhost' >/dev/null 2>&1;"
      " openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2"
      "   -extfile server.ext -out server.crt >/dev/null 2>&1;"
      " for who in client:ca rogue:rogue-ca; do n=${who%%:*}; ca=${who##*:};"
      "   openssl req -newkey rsa:2048 -nodes -keyout $n.key -out $n.csr -subj \"/CN=$n\""
      "     >/dev/null 2>&1;"
      "   openssl x509 -req -in $n.csr -CA $ca.crt -CAkey $ca.key -CAcreateserial -days 2"
      "     -out $n.crt >/dev/null 2>&1; done";
  return std::system(("bash -c " + ShellQuote(script)).c_str()) == 0;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Token file lines `sha256 role identity`, hashed with the openssl CLI (an independent oracle for
// the server's hashing).
inline bool WriteTokenFile(const std::string& path,
                           const std::vector<std::array<std::string, 3>>& tokens) {
  std::string script = "set -e; : > " + ShellQuote(path) + ";";
  for (const auto& [token, role, identity] : tokens) {
    script += " h=$(printf %s " + ShellQuote(token) +
              " | openssl dgst -sha256 -r | cut -d' ' -f1); echo \"$h " + role + " " + identity +
              "\" >> " + ShellQuote(path) + ";";
  }
  return std::system(("bash -c " + ShellQuote(script)).c_str()) == 0;
}

class SecurityFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    certs_ = new TempDir();
    ASSERT_TRUE(MakeCertificates(certs_->path()));
    ASSERT_TRUE(WriteTokenFile(Cert("tokens"), {{"query-secret", "query", "reader"},
                                                {"edit-secret", "edit", "builder"},
                                                {"admin-secret", "admin", "operator"},
                                                {"other-query-secret", "query", "reader2"}}));
  }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }
  static std::string Cert(const std::string& name) { return certs_->path() + "/" + name; }

  // Starts the server with a small world plus `args`.
  void StartServer(std::vector<std::string> args) {
    args.insert(args.begin(), {"--data_dir=" + dir_.path() + "/data", "--world_size=64,64,64",
                               "--backup_root=" + dir_.path() + "/backups"});
    ASSERT_TRUE(server_.Start(VOXCOL_SERVER_PATH, args, dir_.path())) << server_.Log();
  }

  client::ChannelSecurity Security(const std::string& token, bool tls = true,
                                   const std::string& client_cert = "") const {
    client::ChannelSecurity s;
    s.token = token;
    if (tls) s.ca_pem = ReadText(Cert("ca.crt"));
    if (!client_cert.empty()) {
      s.cert_pem = ReadText(Cert(client_cert + ".crt"));
      s.key_pem = ReadText(Cert(client_cert + ".key"));
    }
    return s;
  }
  std::unique_ptr<client::Client> MakeClient(const client::ChannelSecurity& security) const {
    return std::make_unique<client::Client>(server_.address(), std::chrono::seconds(10), security);
  }

  // The CLI against the server with `args`.
  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {VOXCOL_CLI_PATH, "--server=" + server_.address()});
    return RunCommand(args, dir_.path());
  }

  static TempDir* certs_;
  TempDir dir_;
  ServerProcess server_;
};

inline TempDir* SecurityFixture::certs_ = nullptr;

}  // namespace voxcol::testing
