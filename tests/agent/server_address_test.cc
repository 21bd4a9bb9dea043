// --server to gRPC target: numeric addresses become ipv4:/ipv6: URIs so that no name lookup ever runs
// (a phone's static agent has no resolver); a name that does not resolve is refused with advice.
#include "agent/server_address.h"

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
