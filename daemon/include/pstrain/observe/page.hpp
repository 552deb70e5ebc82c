#pragma once

#include <string_view>

namespace pstrain::observe {

// The page at / (daemon/src/observe/page.html, embedded at build time).
extern const std::string_view kPageHtml;

}  // namespace pstrain::observe
