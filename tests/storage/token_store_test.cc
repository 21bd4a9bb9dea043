// Tokens in the store, on both backends (SQLite, PostgreSQL): only hashes kept, names unique, kinds checked
// by the schema, and a revocation written by another connection (the `memfleet-server token revoke`
// process) seen by the running server's next read.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "storage/store.h"
#include "tests/support/store_backends.h"

namespace memfleet::storage {
namespace {

TokenRecord Token(const std::string& name, const std::string& kind, const std::string& hash,
                  const std::string& device = "") {
  TokenRecord t;
  t.name = name;
  t.kind = kind;
  t.device_id = device;
  t.sha256_hex = hash;
  t.created_at = "2026-12-03T08:00:00Z";
  return t;
}

// Open() opens another store (other connections) on the test's database, as another process would.
class TokenStoreTest : public testing::StoreOnBackendTest {
 protected:
  std::unique_ptr<Store> Open() { return testing::OpenStoreAt(location_); }
};

TEST_P(TokenStoreTest, PutFindListRevoke) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(*store->HasTokens());
  ASSERT_TRUE(store->PutToken(Token("bench-3", "agent", std::string(64, 'a'), "bench-3")).ok());
  ASSERT_TRUE(store->PutToken(Token("ci", "read", std::string(64, 'b'))).ok());
  EXPECT_TRUE(*store->HasTokens());
  absl::StatusOr<std::optional<TokenRecord>> found = store->FindTokenByHash(std::string(64, 'a'));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->name, "bench-3");
  EXPECT_EQ((*found)->kind, "agent");
  EXPECT_EQ((*found)->device_id, "bench-3");
  EXPECT_EQ((*found)->revoked_at, "");
  EXPECT_FALSE(store->FindTokenByHash(std::string(64, 'c'))->has_value());
  absl::StatusOr<std::vector<TokenRecord>> all = store->ListTokens();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "bench-3");  // by name
  EXPECT_EQ((*all)[1].name, "ci");
  EXPECT_TRUE(*store->RevokeToken("ci", "2026-12-03T09:00:00+01:00"));
  EXPECT_FALSE(*store->RevokeToken("ci", "2026-12-03T09:00:00Z"));  // already revoked
  EXPECT_EQ((*store->FindTokenByHash(std::string(64, 'b')))->revoked_at, "2026-12-03T08:00:00.000Z");  // normalized
}

TEST_P(TokenStoreTest, TheSchemaRefusesDuplicatesAndUnknownKinds) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutToken(Token("ci", "read", std::string(64, 'b'))).ok());
  EXPECT_EQ(store->PutToken(Token("ci", "admin", std::string(64, 'd'))).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store->PutToken(Token("other", "read", std::string(64, 'b'))).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store->PutToken(Token("root", "root", std::string(64, 'e'))).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->PutToken(Token("", "read", std::string(64, 'f'))).code(), absl::StatusCode::kInvalidArgument);
  // A name that would be SQL is just a name.
  ASSERT_TRUE(store->PutToken(Token("x'); DROP TABLE tokens; --", "read", std::string(64, '1'))).ok());
  EXPECT_EQ(store->ListTokens()->size(), 2u);
}

TEST_P(TokenStoreTest, ARevocationByAnotherConnectionIsSeenAtOnce) {
  std::unique_ptr<Store> server = Open();
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->PutToken(Token("ci", "read", std::string(64, 'b'))).ok());
  ASSERT_EQ((*server->FindTokenByHash(std::string(64, 'b')))->revoked_at, "");
  {
    std::unique_ptr<Store> admin = Open();  // as `memfleet-server --db F token revoke ci` opens it
    ASSERT_TRUE(*admin->RevokeToken("ci", "2026-12-03T08:30:00Z"));
  }
  EXPECT_EQ((*server->FindTokenByHash(std::string(64, 'b')))->revoked_at, "2026-12-03T08:30:00.000Z");
  server.reset();
  EXPECT_EQ((*Open()->FindTokenByHash(std::string(64, 'b')))->revoked_at, "2026-12-03T08:30:00.000Z");
}

INSTANTIATE_TEST_SUITE_P(Backends, TokenStoreTest, testing::kBothBackends, testing::StoreBackendName);

}  // namespace
}  // namespace memfleet::storage
