#include "pstrain/ps/answer_encoder.hpp"

namespace pstrain::ps {

AnswerEncoder::Encoded AnswerEncoder::encode(const Copy& held, const Shard::Params& params) {
  if (encoding_ == net::WireEncoding::kFp32) {
    return Encoded{encoding_, params.get(), count_, nullptr, params};
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& made : made_) {
    if (made.params != params) continue;
    if (made.from == held) return made.encoded;
    if (!held) {  // new: it joins the workers that hold `after`
      const auto& after = made.encoded.after;
      return Encoded{net::WireEncoding::kFp32, after->data(), count_, after, after};
    }
  }
  made_.push_front(Made{held, params, held ? change(held, params) : whole(params)});
  if (made_.size() > kKept) made_.pop_back();
  return made_.front().encoded;
}

AnswerEncoder::Encoded AnswerEncoder::whole(const Shard::Params& params) {
  auto copy = std::make_shared<AlignedVector<float>>(params.get(), params.get() + count_);
  return Encoded{net::WireEncoding::kFp32, copy->data(), count_, copy, copy};
}

AnswerEncoder::Encoded AnswerEncoder::change(const Copy& held, const Shard::Params& params) {
  auto words = std::make_shared<AlignedVector<std::uint32_t>>(net::encodedWords(encoding_, count_));
  auto after = std::make_shared<AlignedVector<float>>(count_);
  net::encodeChange(encoding_, held->data(), params.get(), count_, words->data(), after->data());
  // The channel sends 32-bit words; they are floats only where the encoding is fp32.
  return Encoded{encoding_, reinterpret_cast<const float*>(words->data()), words->size(), after,
                 words};
}

}  // namespace pstrain::ps
