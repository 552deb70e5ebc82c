#include "pstrain/ps/checkpoint.hpp"

#include "pstrain/common/bytes.hpp"
#include "pstrain/common/error.hpp"

namespace pstrain::ps {
namespace {

constexpr std::uint64_t kMagicV1 = 0x31544b4352545350;  // "PSTRCKT1"
constexpr std::uint64_t kMagic = 0x32544b4352545350;    // "PSTRCKT2"

}  // namespace

std::vector<std::uint8_t> encodeCheckpoint(const Checkpoint& checkpoint) {
  std::vector<std::uint8_t> bytes;
  const auto& cut = checkpoint.cut;
  ByteWriter(bytes)
      .put(kMagic)
      .put(checkpoint.runId)
      .put(cut.generation)
      .put(std::uint32_t(cut.psCount))
      .put(std::uint32_t(cut.index))
      .put(std::uint64_t(cut.range.offset))
      .put(std::uint64_t(cut.range.count))
      .put(checkpoint.globalStep);
  bytes.insert(bytes.end(), checkpoint.shard.begin(), checkpoint.shard.end());
  return bytes;
}

Checkpoint decodeCheckpoint(const std::vector<std::uint8_t>& bytes) {
  ByteReader in(bytes.data(), bytes.size());
  const auto magic = in.get<std::uint64_t>();
  if (magic != kMagic && magic != kMagicV1) throw DecodeError("not a ps checkpoint");
  Checkpoint checkpoint;
  checkpoint.runId = in.get<std::uint64_t>();
  auto& cut = checkpoint.cut;
  if (magic == kMagicV1) {
    cut.psCount = 0;
    cut.range.offset = in.get<std::uint64_t>();
  } else {
    cut.generation = in.get<std::uint64_t>();
    cut.psCount = int(in.get<std::uint32_t>());
    cut.index = int(in.get<std::uint32_t>());
    cut.range.offset = in.get<std::uint64_t>();
    cut.range.count = in.get<std::uint64_t>();
  }
  checkpoint.globalStep = in.get<std::uint64_t>();
  auto rest = in.rest();
  checkpoint.shard.assign(rest.begin(), rest.end());
  return checkpoint;
}

}  // namespace pstrain::ps
