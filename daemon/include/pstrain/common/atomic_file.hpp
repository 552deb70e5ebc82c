#pragma once

#include <string>

namespace pstrain {

// Replaces `path` with `contents` so that readers see the old file or the new one, never a part:
// writes a temporary file beside it, fsyncs it, renames it over `path`. Throws IoError.
void writeFileAtomically(const std::string& path, const std::string& contents);

}  // namespace pstrain
