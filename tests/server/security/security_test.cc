// The security library (server/security): token secrets and their SHA-256, the access table, the
// Authorizer's decisions on a real SQLite store, the per-agent limits and the loopback rule.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "memfleet/v1/agent_service.grpc.pb.h"
#include "memfleet/v1/query_service.grpc.pb.h"
#if __has_include("memfleet/v1/baseline_service.pb.h")
#include "memfleet/v1/baseline_service.pb.h"
#endif
#include "server/security/agent_limits.h"
#include "server/security/authorizer.h"
#include "server/security/exposure.h"
#include "server/security/token.h"
#include "server/security/token_admin.h"
#include "storage/sqlite/sqlite_store.h"
#include "tests/support/failing_store.h"

namespace memfleet::security {
namespace {

constexpr char kNow[] = "2026-12-03T08:00:00Z";

TEST(TokenTest, Sha256MatchesTheFipsTestVectors) {
  // FIPS 180-2, appendix B.1 ("abc") and the well-known digest of the empty message.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // B.2: the two-block message.
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(TokenTest, SecretsAreFreshPrefixedHex) {
  absl::StatusOr<std::string> a = NewTokenSecret();
  absl::StatusOr<std::string> b = NewTokenSecret();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  ASSERT_EQ(a->size(), 4u + 64u);  // "mft_" + 32 bytes in hex
  EXPECT_EQ(a->substr(0, 4), "mft_");
  EXPECT_EQ(a->substr(4).find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(TokenTest, BearerParsing) {
  EXPECT_EQ(*ParseBearer("Bearer mft_abc"), "mft_abc");
  EXPECT_EQ(*ParseBearer("bearer   mft_abc  "), "mft_abc");
  for (const char* bad : {"", "Bearer", "Bearer ", "Basic dXNlcjpwdw==", "mft_abc", "Bearer mft abc", "Bearer mft_\x01",
                          "Bearer mft_\xc3\xa9"}) {
    absl::StatusOr<std::string> t = ParseBearer(bad);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kUnauthenticated) << bad;
  }
  EXPECT_FALSE(ParseBearer("Bearer " + std::string(kMaxTokenBytes + 1, 'a')).ok());
}

TEST(TokenTest, NamesAndKinds) {
  EXPECT_TRUE(CheckTokenName("bench-3.lab_A").ok());
  for (const std::string& bad : {std::string(), std::string(65, 'a'), std::string("a b"), std::string("a/b"),
                                 std::string("x'; DROP TABLE tokens; --"), std::string("a\nb")}) {
    EXPECT_FALSE(CheckTokenName(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseTokenKind("agent"), TokenKind::kAgent);
  EXPECT_EQ(ParseTokenKind("admin"), TokenKind::kAdmin);
  EXPECT_FALSE(ParseTokenKind("root").has_value());
  EXPECT_FALSE(ParseTokenKind("Admin").has_value());
}

// Every RPC of every service linked into the server has an entry: a new method someone forgets to add
// would be denied to everyone, and this test says which.
TEST(AccessTableTest, EveryMethodOfEveryServiceHasAnEntry) {
  // Reached through a message of each file, so that the file is linked and its services registered.
  std::vector<const google::protobuf::FileDescriptor*> files = {v1::AgentMessage::descriptor()->file(),
                                                                v1::ListDevicesRequest::descriptor()->file()};
#if __has_include("memfleet/v1/baseline_service.pb.h")
  files.push_back(v1::ImportBaselineRequest::descriptor()->file());
#endif
  int methods = 0;
  for (const google::protobuf::FileDescriptor* file : files) {
    for (int s = 0; s < file->service_count(); ++s) {
      const google::protobuf::ServiceDescriptor* service = file->service(s);
      for (int i = 0; i < service->method_count(); ++i) {
        std::string full = "/" + std::string(service->full_name()) + "/" + std::string(service->method(i)->name());
        EXPECT_TRUE(RequiredAccess(full).has_value()) << full << " is missing from kMethodTable";
        ++methods;
      }
    }
  }
  EXPECT_GE(methods, 7);  // Connect + the six QueryService methods at least
}

TEST(AccessTableTest, WhoNeedsWhat) {
  EXPECT_EQ(RequiredAccess("/memfleet.v1.AgentService/Connect"), Access::kAgent);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.QueryService/ListDevices"), Access::kRead);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.QueryService/GetFleet"), Access::kRead);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.QueryService/StartSweep"), Access::kAdmin);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.QueryService/Reaccount"), Access::kAdmin);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.BaselineService/ImportBaseline"), Access::kAdmin);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.BaselineService/CheckBaseline"), Access::kRead);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.AdminService/MintAgentToken"), Access::kAdmin);
  EXPECT_EQ(RequiredAccess("/memfleet.v1.AdminService/RetireDevice"), Access::kAdmin);
  EXPECT_FALSE(RequiredAccess("/memfleet.v1.QueryService/DropEverything").has_value());
  EXPECT_FALSE(RequiredAccess("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo").has_value());
  EXPECT_FALSE(RequiredAccess("").has_value());
}

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<storage::Store>> s = storage::OpenSqliteStore(":memory:");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }
  std::string Add(const std::string& name, TokenKind kind, const std::string& device = "") {
    absl::StatusOr<std::string> secret = AddToken(*store_, {name, kind, device}, kNow);
    EXPECT_TRUE(secret.ok()) << secret.status();
    return secret.ok() ? *secret : "";
  }
  static std::optional<std::string> Bearer(const std::string& t) { return "Bearer " + t; }

  std::unique_ptr<storage::Store> store_;
};

TEST_F(AuthorizerTest, AnEmptyTableOnLoopbackLetsEveryCallThrough) {
  Authorizer auth(*store_, {});
  absl::StatusOr<Principal> p = auth.Authorize("/memfleet.v1.QueryService/StartSweep", std::nullopt);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->authenticated);
  // Unknown methods are denied even then.
  EXPECT_EQ(auth.Authorize("/memfleet.v1.QueryService/Nope", std::nullopt).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(AuthorizerTest, RequireTokensWithAnEmptyTableRefusesEveryone) {
  AuthorizerOptions options;
  options.require_tokens = true;
  Authorizer auth(*store_, options);
  EXPECT_EQ(auth.Authorize("/memfleet.v1.QueryService/ListDevices", std::nullopt).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, KindsDecide) {
  std::string agent = Add("bench-3", TokenKind::kAgent, "bench-3");
  std::string reader = Add("ci", TokenKind::kRead);
  std::string admin = Add("boss", TokenKind::kAdmin);
  Authorizer auth(*store_, {});
  struct Case {
    std::string token;
    const char* method;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {agent, "/memfleet.v1.AgentService/Connect", absl::StatusCode::kOk},
      {agent, "/memfleet.v1.QueryService/ListDevices", absl::StatusCode::kPermissionDenied},
      {reader, "/memfleet.v1.AgentService/Connect", absl::StatusCode::kPermissionDenied},
      {reader, "/memfleet.v1.QueryService/ListDevices", absl::StatusCode::kOk},
      {reader, "/memfleet.v1.QueryService/StartSweep", absl::StatusCode::kPermissionDenied},
      {reader, "/memfleet.v1.QueryService/Reaccount", absl::StatusCode::kPermissionDenied},
      {reader, "/memfleet.v1.BaselineService/ImportBaseline", absl::StatusCode::kPermissionDenied},
      {admin, "/memfleet.v1.QueryService/StartSweep", absl::StatusCode::kOk},
      {admin, "/memfleet.v1.QueryService/GetReport", absl::StatusCode::kOk},
      {admin, "/memfleet.v1.AgentService/Connect", absl::StatusCode::kPermissionDenied},
      {"mft_" + std::string(64, 'f'), "/memfleet.v1.QueryService/ListDevices", absl::StatusCode::kUnauthenticated},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Principal> p = auth.Authorize(c.method, Bearer(c.token));
    EXPECT_EQ(p.status().code(), c.code) << c.method << " " << p.status();
  }
  absl::StatusOr<Principal> p = auth.Authorize("/memfleet.v1.AgentService/Connect", Bearer(agent));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->authenticated);
  EXPECT_EQ(p->token_name, "bench-3");
  EXPECT_EQ(p->device_id, "bench-3");
  // No token at all once the table has one.
  EXPECT_EQ(auth.Authorize("/memfleet.v1.QueryService/ListDevices", std::nullopt).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, RevocationIsSeenAtTheNextCheck) {
  std::string reader = Add("ci", TokenKind::kRead);
  Authorizer auth(*store_, {});
  absl::StatusOr<Principal> p = auth.Authorize("/memfleet.v1.QueryService/ListDevices", Bearer(reader));
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(auth.StillValid(*p).ok());
  ASSERT_TRUE(RevokeToken(*store_, "ci", kNow).ok());
  absl::StatusOr<Principal> again = auth.Authorize("/memfleet.v1.QueryService/ListDevices", Bearer(reader));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(again.status().message().find("revoked"), std::string::npos) << again.status();
  EXPECT_EQ(auth.StillValid(*p).code(), absl::StatusCode::kUnauthenticated);
  // Revoking the only token keeps authentication on: the table is not empty.
  EXPECT_EQ(auth.Authorize("/memfleet.v1.QueryService/ListDevices", std::nullopt).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, TheStoreKeepsOnlyTheHash) {
  std::string secret = Add("bench-3", TokenKind::kAgent, "bench-3");
  absl::StatusOr<std::vector<storage::TokenRecord>> tokens = store_->ListTokens();
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 1u);
  EXPECT_EQ((*tokens)[0].sha256_hex, Sha256Hex(secret));
  EXPECT_EQ((*tokens)[0].sha256_hex.find(secret.substr(4)), std::string::npos);
  absl::StatusOr<std::string> listing = ListTokensText(*store_);
  ASSERT_TRUE(listing.ok());
  EXPECT_EQ(listing->find(secret.substr(4, 12)), std::string::npos) << *listing;
  EXPECT_EQ(listing->find((*tokens)[0].sha256_hex.substr(0, 12)), std::string::npos) << *listing;
  EXPECT_NE(listing->find("bench-3"), std::string::npos);
}

// `token list` keeps every cell under its heading, whatever the lengths of names, kinds and stored times.
TEST_F(AuthorizerTest, TheTokenListKeepsItsColumnsAligned) {
  Add("a-rather-long-token-name", TokenKind::kAdmin, "");
  Add("x", TokenKind::kAgent, "bench-3");
  absl::StatusOr<std::string> listing = ListTokensText(*store_);
  ASSERT_TRUE(listing.ok()) << listing.status();
  std::vector<std::string> lines = absl::StrSplit(*listing, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << *listing;
  for (const char* heading : {"KIND", "DEVICE", "CREATED", "STATE"}) {
    const size_t column = lines[0].find(heading);
    ASSERT_NE(column, std::string::npos) << heading;
    for (size_t i = 1; i < lines.size(); ++i) {
      ASSERT_GT(lines[i].size(), column) << *listing;
      EXPECT_EQ(lines[i][column - 1], ' ') << heading << " in\n" << *listing;
      EXPECT_NE(lines[i][column], ' ') << heading << " in\n" << *listing;
    }
  }
}

// A token store that cannot answer refuses every call: reading the error as "no tokens" would turn
// authentication off exactly while the database is in trouble.
TEST(AuthorizerOverAFailingTokenStoreTest, EveryDecisionIsARefusal) {
  absl::StatusOr<std::unique_ptr<storage::Store>> sqlite = storage::OpenSqliteStore(":memory:");
  ASSERT_TRUE(sqlite.ok()) << sqlite.status();
  testing::FailingStore store(std::move(*sqlite));
  absl::StatusOr<std::string> secret = AddToken(store, {"ci", TokenKind::kRead, ""}, kNow);
  ASSERT_TRUE(secret.ok()) << secret.status();
  Authorizer auth(store, {});
  absl::StatusOr<Principal> ok = auth.Authorize("/memfleet.v1.QueryService/ListDevices", "Bearer " + *secret);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_TRUE(ok->authenticated);

  store.fail_token_reads = true;
  const std::optional<std::string> bearers[] = {std::nullopt, "Bearer " + *secret};
  for (const std::optional<std::string>& bearer : bearers) {
    absl::StatusOr<Principal> p = auth.Authorize("/memfleet.v1.QueryService/ListDevices", bearer);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kUnavailable) << p.status();
    EXPECT_NE(p.status().message().find("cannot read its tokens"), std::string_view::npos) << p.status();
  }
  EXPECT_EQ(auth.StillValid(*ok).code(), absl::StatusCode::kUnavailable);

  // With tokens required the answer without a token needs no store; with one it still cannot be checked.
  AuthorizerOptions required;
  required.require_tokens = true;
  Authorizer strict(store, required);
  EXPECT_EQ(strict.Authorize("/memfleet.v1.QueryService/ListDevices", std::nullopt).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(strict.Authorize("/memfleet.v1.QueryService/ListDevices", "Bearer " + *secret).status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(AuthorizerTest, TokenAddRefusesBadInput) {
  EXPECT_EQ(AddToken(*store_, {"dev", TokenKind::kAgent, ""}, kNow).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddToken(*store_, {"ci", TokenKind::kRead, "dev"}, kNow).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddToken(*store_, {"dev", TokenKind::kAgent, "../../etc"}, kNow).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddToken(*store_, {"x'--", TokenKind::kRead, ""}, kNow).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(AddToken(*store_, {"ci", TokenKind::kRead, ""}, kNow).ok());
  EXPECT_EQ(AddToken(*store_, {"ci", TokenKind::kAdmin, ""}, kNow).status().code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(RevokeToken(*store_, "ci", kNow).ok());
  EXPECT_EQ(RevokeToken(*store_, "ci", kNow).code(), absl::StatusCode::kNotFound);  // already revoked
  EXPECT_EQ(RevokeToken(*store_, "nobody", kNow).code(), absl::StatusCode::kNotFound);
  // A revoked name stays taken, so a new token can never inherit an old one's audit trail.
  EXPECT_EQ(AddToken(*store_, {"ci", TokenKind::kRead, ""}, kNow).status().code(), absl::StatusCode::kAlreadyExists);
}

TEST(AgentLimitsTest, StreamsPerKeyAreCountedAndReleased) {
  AgentLimitsOptions options;
  options.max_streams_per_key = 2;
  options.max_captures_per_minute = 0;
  AgentLimits limits(options);
  auto a = limits.OpenStream("token:x", "token \"x\"");
  auto b = limits.OpenStream("token:x", "token \"x\"");
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<std::unique_ptr<AgentLimits::StreamLease>> c = limits.OpenStream("token:x", "token \"x\"");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(limits.OpenStream("token:y", "token \"y\"").ok());  // another token is not affected
  a->reset();
  EXPECT_EQ(limits.open_streams("token:x"), 1u);
  EXPECT_TRUE(limits.OpenStream("token:x", "token \"x\"").ok());
}

TEST(AgentLimitsTest, CapturesPerMinuteSlideWithTheClock) {
  auto now = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
  AgentLimitsOptions options;
  options.max_streams_per_key = 0;
  options.max_captures_per_minute = 3;
  AgentLimits limits(options, [&now] { return now; });
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(limits.CountCapture("dev").ok()) << i;
    now += std::chrono::seconds(10);  // at 0, 10, 20 s
  }
  // At 30 s: three within the last minute.
  EXPECT_EQ(limits.CountCapture("dev").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(limits.CountCapture("other").ok());
  // At 60 s the first (0 s) has left the window: one more fits, then none until 70 s.
  now += std::chrono::seconds(30);
  EXPECT_TRUE(limits.CountCapture("dev").ok());
  EXPECT_FALSE(limits.CountCapture("dev").ok());
  now += std::chrono::seconds(10);
  EXPECT_TRUE(limits.CountCapture("dev").ok());
}

Exposure Exposed(bool tls, bool tokens, bool insecure) {
  Exposure e;
  e.tls = tls;
  e.tokens = tokens;
  e.insecure = insecure;
  return e;
}

TEST(ExposureTest, LoopbackIsOnlyLoopback) {
  for (const char* yes :
       {"127.0.0.1:7420", "127.0.0.1:0", "127.1.2.3:1", "localhost:7420", "[::1]:7420", "unix:/run/memfleet.sock"}) {
    EXPECT_TRUE(IsLoopbackListen(yes)) << yes;
  }
  for (const char* no : {"0.0.0.0:7420", "[::]:7420", "10.0.0.5:7420", "lab-server:7420", "127.0.0.1.evil.com:1",
                         "127.0.0:1", "127..0.1:1", "1127.0.0.1:1", "::1", ":7420", "127.0.0.1"}) {
    EXPECT_FALSE(IsLoopbackListen(no)) << no;
  }
}

TEST(ExposureTest, BeyondLoopbackNeedsTlsAndTokensOrInsecure) {
  EXPECT_TRUE(CheckListenExposure("127.0.0.1:7420", {}).ok());
  EXPECT_TRUE(CheckListenExposure("0.0.0.0:7420", Exposed(true, true, false)).ok());
  EXPECT_TRUE(CheckListenExposure("0.0.0.0:7420", Exposed(false, false, true)).ok());
  absl::Status none = CheckListenExposure("0.0.0.0:7420", {});
  EXPECT_EQ(none.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(none.message().find("--tls-cert"), std::string::npos);
  EXPECT_NE(none.message().find("token add"), std::string::npos);
  EXPECT_NE(none.message().find("--insecure"), std::string::npos);
  absl::Status no_tokens = CheckListenExposure("10.0.0.5:7420", Exposed(true, false, false));
  EXPECT_EQ(no_tokens.message().find("--tls-cert"), std::string::npos) << no_tokens;
  EXPECT_NE(no_tokens.message().find("token add"), std::string::npos) << no_tokens;
}

}  // namespace
}  // namespace memfleet::security
