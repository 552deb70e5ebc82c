#include "pstrain/ps/checkpoint.hpp"

#include "pstrain/common/bytes.hpp"
#include "pstrain/common/error.hpp"

namespace pstrain::ps {
namespace {

constexpr std::uint64_t kMagic = 0x31544b4352545350;  // "PSTRCKT1"

}  // namespace

std::vector<std::uint8_t> encodeCheckpoint(const Checkpoint& checkpoint) {
  std::vector<std::uint8_t> bytes;
  ByteWriter(bytes).put(kMagic).put(checkpoint.runId).put(checkpoint.offset).put(
      checkpoint.globalStep);
  bytes.insert(bytes.end(), checkpoint.shard.begin(), checkpoint.shard.end());
  return bytes;
}

Checkpoint decodeCheckpoint(const std::vector<std::uint8_t>& bytes) {
  ByteReader in(bytes.data(), bytes.size());
  if (in.get<std::uint64_t>() != kMagic) throw DecodeError("not a ps checkpoint");
  Checkpoint checkpoint;
  checkpoint.runId = in.get<std::uint64_t>();
  checkpoint.offset = in.get<std::uint64_t>();
  checkpoint.globalStep = in.get<std::uint64_t>();
  auto rest = in.rest();
  checkpoint.shard.assign(rest.begin(), rest.end());
  return checkpoint;
}

}  // namespace pstrain::ps
