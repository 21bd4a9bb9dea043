#include "storage/sql_connection.h"

#include <cctype>
#include <string>
#include <string_view>

namespace memfleet::storage {
namespace {

constexpr size_t kMaxFirstWords = 6;
constexpr size_t kMaxFirstWordsChars = 60;

}  // namespace

std::string SqlFirstWords(std::string_view sql) {
  std::string out;
  size_t words = 0;
  size_t i = 0;
  while (i < sql.size() && words < kMaxFirstWords) {
    while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
    if (i >= sql.size()) break;
    size_t start = i;
    while (i < sql.size() && !std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
    if (!out.empty()) out += ' ';
    out.append(sql.substr(start, i - start));
    ++words;
  }
  bool truncated = false;
  if (out.size() > kMaxFirstWordsChars) {
    out.resize(kMaxFirstWordsChars);
    truncated = true;
  }
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  if (truncated || i < sql.size()) out += " ...";
  return out;
}

}  // namespace memfleet::storage
