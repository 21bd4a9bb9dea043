// --server to gRPC target: numeric addresses become ipv4:/ipv6: URIs so that no name lookup ever runs
// (a phone's static agent has no resolver); a name that does not resolve is refused with advice.
#include "agent/server_address.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace memfleet::agent {
namespace {

std::string Target(const std::string& server) {
  absl::StatusOr<ServerAddress> a = ParseServerAddress(server);
  EXPECT_TRUE(a.ok()) << server << ": " << a.status();
  return a.ok() ? GrpcTarget(*a) : "";
}

std::string Error(const std::string& server) {
  absl::StatusOr<ServerAddress> a = ParseServerAddress(server);
  EXPECT_FALSE(a.ok()) << server;
  return a.ok() ? "" : std::string(a.status().message());
}

TEST(ServerAddressTest, NumericAddressesNeedNoResolver) {
  EXPECT_EQ(Target("127.0.0.1:7070"), "ipv4:127.0.0.1:7070");
  EXPECT_EQ(Target("192.0.2.10:65535"), "ipv4:192.0.2.10:65535");
  EXPECT_EQ(Target("[::1]:7070"), "ipv6:[::1]:7070");
  EXPECT_EQ(Target("[2001:db8::5]:1"), "ipv6:[2001:db8::5]:1");
  // Numeric addresses are resolvable without any lookup.
  EXPECT_TRUE(CheckResolvable(*ParseServerAddress("127.0.0.1:7070")).ok());
  EXPECT_TRUE(CheckResolvable(*ParseServerAddress("[::1]:7070")).ok());
}

TEST(ServerAddressTest, GrpcLiteralUrisPassThrough) {
  EXPECT_EQ(Target("ipv4:127.0.0.1:7070"), "ipv4:127.0.0.1:7070");
  EXPECT_EQ(Target("ipv4:127.0.0.1:7070,127.0.0.2:7070"), "ipv4:127.0.0.1:7070,127.0.0.2:7070");
  EXPECT_EQ(Target("ipv6:[::1]:7070"), "ipv6:[::1]:7070");
  EXPECT_EQ(Target("unix:/run/memfleet.sock"), "unix:/run/memfleet.sock");
  EXPECT_TRUE(CheckResolvable(*ParseServerAddress("ipv4:127.0.0.1:7070")).ok());
}

TEST(ServerAddressTest, HostNamesStayNames) {
  absl::StatusOr<ServerAddress> a = ParseServerAddress("lab.example:7070");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kind, ServerAddress::Kind::kHostName);
  EXPECT_EQ(a->host, "lab.example");
  EXPECT_EQ(GrpcTarget(*a), "lab.example:7070");
}

TEST(ServerAddressTest, MalformedAddressesSayWhatIsWrong) {
  EXPECT_NE(Error("127.0.0.1").find("no port"), std::string::npos);
  EXPECT_NE(Error("127.0.0.1:").find("port must be a number"), std::string::npos);
  EXPECT_NE(Error("127.0.0.1:0").find("port must be a number"), std::string::npos);
  EXPECT_NE(Error("127.0.0.1:70700").find("port must be a number"), std::string::npos);
  EXPECT_NE(Error("127.0.0.1:+7").find("port must be a number"), std::string::npos);
  EXPECT_NE(Error(":7070").find("no host"), std::string::npos);
  EXPECT_NE(Error("::1:7070").find("brackets"), std::string::npos);
  EXPECT_NE(Error("[::1]").find("[ADDRESS]:PORT"), std::string::npos);
  EXPECT_NE(Error("[lab]:7070").find("not an IPv6 address"), std::string::npos);
}

std::vector<std::string> Targets(const std::string& servers) {
  absl::StatusOr<std::vector<ServerAddress>> list = ParseServerList(servers);
  EXPECT_TRUE(list.ok()) << servers << ": " << list.status();
  std::vector<std::string> out;
  if (list.ok()) {
    for (const ServerAddress& a : *list) out.push_back(GrpcTarget(a));
  }
  return out;
}

std::string ListError(const std::string& servers) {
  absl::StatusOr<std::vector<ServerAddress>> list = ParseServerList(servers);
  EXPECT_FALSE(list.ok()) << servers;
  return list.ok() ? "" : std::string(list.status().message());
}

TEST(ServerAddressTest, ACommaSeparatedListKeepsItsOrder) {
  EXPECT_EQ(Targets("127.0.0.1:7070"), std::vector<std::string>{"ipv4:127.0.0.1:7070"});
  EXPECT_EQ(Targets("10.0.0.3:7070,[::1]:7071,lab.example:7070"),
            (std::vector<std::string>{"ipv4:10.0.0.3:7070", "ipv6:[::1]:7071", "lab.example:7070"}));
  // gRPC's own list inside an ipv4: URI is one target, not split.
  EXPECT_EQ(Targets("ipv4:127.0.0.1:7070,127.0.0.2:7070"),
            std::vector<std::string>{"ipv4:127.0.0.1:7070,127.0.0.2:7070"});
}

TEST(ServerAddressTest, ABadListSaysWhichItemIsWrong) {
  EXPECT_NE(ListError("127.0.0.1:7070,").find("an empty address"), std::string::npos);
  EXPECT_NE(ListError(",127.0.0.1:7070").find("an empty address"), std::string::npos);
  EXPECT_NE(ListError("127.0.0.1:7070,127.0.0.1").find("no port"), std::string::npos);
  EXPECT_NE(ListError("127.0.0.1:7070,127.0.0.1:7070").find("127.0.0.1:7070 is listed twice"), std::string::npos);
  EXPECT_NE(ListError("1.0.0.1:1,1.0.0.2:1,1.0.0.3:1,1.0.0.4:1,1.0.0.5:1,1.0.0.6:1,1.0.0.7:1,1.0.0.8:1,1.0.0.9:1")
                .find("more than 8 servers"),
            std::string::npos);
  // One address keeps the single-address messages.
  EXPECT_NE(ListError("127.0.0.1").find("no port"), std::string::npos);
}

// .invalid never resolves (RFC 6761): the agent is told to give an address, with the port it asked for.
TEST(ServerAddressTest, AnUnresolvableNameAsksForAnAddress) {
  absl::StatusOr<ServerAddress> a = ParseServerAddress("no-such-lab.invalid:7070");
  ASSERT_TRUE(a.ok());
  absl::Status s = CheckResolvable(*a);
  ASSERT_FALSE(s.ok());
  const std::string m(s.message());
  EXPECT_NE(m.find("cannot resolve host name \"no-such-lab.invalid\""), std::string::npos) << m;
  EXPECT_NE(m.find("Give the server as an address"), std::string::npos) << m;
  EXPECT_NE(m.find("127.0.0.1:7070"), std::string::npos) << m;
  EXPECT_NE(m.find("adb reverse tcp:7070 tcp:7070"), std::string::npos) << m;
}

}  // namespace
}  // namespace memfleet::agent
