#include "pstrain/serve/http_reply.hpp"

#include <cstdio>

namespace pstrain::serve {

namespace {

// The length of the UTF-8 sequence at text[at], or 0 when it is not a valid one.
size_t utf8Length(const std::string& text, size_t at) {
  const auto lead = static_cast<unsigned char>(text[at]);
  const size_t length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
  if (length == 0 || lead >= 0xf5 || at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text[at + i]) & 0xc0) != 0x80) return 0;
  }
  return length;
}

}  // namespace

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (size_t at = 0; at < text.size(); ++at) {
    const auto ch = static_cast<unsigned char>(text[at]);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += char(ch);
    } else if (ch < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", ch);
      out += escaped;
    } else if (ch < 0x80) {
      out += char(ch);
    } else if (size_t length = utf8Length(text, at)) {
      out += text.substr(at, length);  // UTF-8 as it is
      at += length - 1;
    } else {
      out += "\\ufffd";  // a byte that is not UTF-8 (a parser quoting a bad body)
    }
  }
  return out + "\"";
}

HttpReply errorReply(int status, const std::string& message) {
  return jsonReply(status, "{\"error\":" + jsonString(message) + "}");
}

}  // namespace pstrain::serve
