#define BOOST_TEST_MODULE message
#include <boost/test/unit_test.hpp>

#include <cstring>

#include "pstrain/common/error.hpp"
#include "pstrain/net/limits.hpp"
#include "pstrain/net/message.hpp"

using namespace pstrain::net;
using pstrain::ProtocolError;
using pstrain::Role;

namespace {

HeaderBytes header(std::uint32_t magic, std::uint16_t version, std::uint16_t type,
                   std::uint32_t length) {
  HeaderBytes bytes{};
  std::memcpy(bytes.data(), &magic, 4);
  std::memcpy(bytes.data() + 4, &version, 2);
  std::memcpy(bytes.data() + 6, &type, 2);
  std::memcpy(bytes.data() + 8, &length, 4);
  return bytes;
}

std::string headerError(const HeaderBytes& bytes, std::uint32_t maxPayload = 1 << 20) {
  try {
    decodeHeader(bytes, maxPayload);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

BOOST_AUTO_TEST_CASE(header_round_trips) {
  const auto length = std::uint32_t(fixedFieldsSize(MessageType::kPush) + 400);
  auto bytes = encodeHeader(MessageType::kPush, length);
  BOOST_TEST(bytes[0] == 'P');
  BOOST_TEST(bytes[3] == 'R');
  auto decoded = decodeHeader(bytes, 1 << 20);
  BOOST_TEST((decoded.type == MessageType::kPush));
  BOOST_TEST(decoded.length == length);
}

BOOST_AUTO_TEST_CASE(rejects_malformed_headers) {
  BOOST_TEST(headerError(header(0x12345678, 1, 4, 12)).find("bad magic") != std::string::npos);
  // A frame of another release names both versions: a mixed cluster fails at the handshake.
  const auto other = headerError(header(kMagic, 10, 1, 47));
  BOOST_TEST(other.find("protocol version 10, this pstrain 11") != std::string::npos, other);
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 0, 0)).find("unknown message type 0") !=
             std::string::npos);
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 99, 0)).find("unknown message type 99") !=
             std::string::npos);
  // A push larger than the receiver allows is refused before any byte of it is read.
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 4, 0xfffffff0), 4096)
                 .find("invalid length") !=
             std::string::npos);
  // Floats come whole; fixed-size messages have exactly their size.
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 4, 12 + 3)) != "accepted");
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 4, 4)) != "accepted");
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 3, 1)) != "accepted");
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 1, 20)) != "accepted");
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 9, 5000)) != "accepted");
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 1, 31 + 16)) == "accepted");
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 17, 0)).find("unknown message type 17") !=
             std::string::npos);
  // 6, the retired status query, is no type any more.
  BOOST_TEST(headerError(header(kMagic, kProtocolVersion, 6, 0)).find("unknown message type 6") !=
             std::string::npos);
  // Every other type from 1 to 12 is known.
  for (int type : {1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12}) {
    BOOST_TEST(headerError(header(kMagic, kProtocolVersion, std::uint16_t(type), 0))
                   .find("unknown") ==
               std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(messages_round_trip) {
  Nonce nonce{};
  nonce[15] = 7;
  auto hello = decodeHello(encode(Hello{Role::kWorker, 3, 101770, 0xdeadbeefcafeull, 4321, nonce}));
  BOOST_TEST(hello.nonce[15] == 7);
  BOOST_TEST((hello.role == Role::kWorker));
  BOOST_TEST(hello.index == 3u);
  BOOST_TEST(hello.parameterCount == 101770u);
  BOOST_TEST(hello.runId == 0xdeadbeefcafeull);

  auto welcome = decodeWelcome(encode(Welcome{50885, 50885, 17, 3000, 8090, 4, 2}));
  BOOST_TEST(welcome.offset == 50885u);
  BOOST_TEST(welcome.trainSteps == 3000u);
  BOOST_TEST(welcome.httpPort == 8090u);
  BOOST_TEST(welcome.generation == 4u);
  BOOST_TEST(welcome.psCount == 2u);

  auto slice = decodeSliceState(
      encode(SliceState{3, 2, 1, 50885, 50885, 1200, 2, {0.5, 0.25}, 1}), 101770);
  BOOST_TEST(slice.generation == 3u);
  BOOST_TEST(slice.index == 1u);
  BOOST_TEST(slice.count == 50885u);
  BOOST_TEST(slice.moments == 2u);
  BOOST_TEST(slice.scalars[1] == 0.25);
  BOOST_TEST(slice.follows == 1u);
  BOOST_TEST(carriesValues(MessageType::kSliceState));
  auto recut = decodeRecut(encode(Recut{5, 3}));
  BOOST_TEST(recut.generation == 5u);
  BOOST_TEST(recut.psCount == 3u);
  BOOST_TEST(decodeCutFreeze(encode(CutFreeze{9})).generation == 9u);
  BOOST_TEST(decodeCutCommit(encode(CutCommit{10})).generation == 10u);

  auto push = decodePush(encode(Push{42, 0.25f, 7, 3, 0xfedcba9876543210u, 31}));
  BOOST_TEST(push.localStep == 42u);
  BOOST_TEST(push.loss == 0.25f);
  BOOST_TEST(push.batch == 7u);
  BOOST_TEST(push.lag == 3u);
  BOOST_TEST(push.incarnation == 0xfedcba9876543210u);
  BOOST_TEST(push.pushNumber == 31u);
  BOOST_CHECK_THROW(decodePush(encode(Push{1, 0, 0, kMaxPushesInFlight, 1, 1})), ProtocolError);

  auto params = decodeParams(encode(Params{99, true, false, 1234, true, 2, 3}));
  BOOST_TEST(params.serviceMicros == 1234u);
  BOOST_TEST(params.held);
  BOOST_TEST(params.globalStep == 99u);
  BOOST_TEST(params.applied);
  BOOST_TEST(!params.done);
  BOOST_TEST(params.rank == 2u);
  BOOST_TEST(params.workers == 3u);

  auto status = decodeStatusReply(encode(StatusReply{Role::kPs, 1, 7, true}));
  BOOST_TEST((status.role == Role::kPs));
  BOOST_TEST(status.done);

  BOOST_TEST(decodeDone(encode(Done{1234})).localSteps == 1234u);
  BOOST_TEST(decodeShardCopy(encode(ShardCopy{2999})).globalStep == 2999u);

  Digest proof{};
  proof[0] = 9;
  auto challenge = decodeChallenge(encode(Challenge{nonce, proof}));
  BOOST_TEST(challenge.nonce[15] == 7);
  BOOST_TEST(challenge.proof[0] == 9);
  BOOST_TEST(decodeProof(encode(Proof{proof})).proof[0] == 9);
}

// The sizes come from the encoders; these are the wire sizes of protocol version 9, which a
// peer of that version expects: a change to a message shows here.
BOOST_AUTO_TEST_CASE(fixed_fields_have_the_sizes_of_the_wire_format) {
  BOOST_TEST(fixedFieldsSize(MessageType::kHello) == 47u);
  BOOST_TEST(fixedFieldsSize(MessageType::kChallenge) == 48u);
  BOOST_TEST(fixedFieldsSize(MessageType::kProof) == 32u);
  BOOST_TEST(fixedFieldsSize(MessageType::kWelcome) == 48u);
  BOOST_TEST(fixedFieldsSize(MessageType::kPull) == 0u);
  BOOST_TEST(fixedFieldsSize(MessageType::kPush) == 37u);
  BOOST_TEST(fixedFieldsSize(MessageType::kParams) == 24u);
  BOOST_TEST(fixedFieldsSize(MessageType::kStatusReply) == 14u);
  BOOST_TEST(fixedFieldsSize(MessageType::kDone) == 8u);
  BOOST_TEST(fixedFieldsSize(MessageType::kShardCopy) == 8u);
  BOOST_TEST(fixedFieldsSize(MessageType::kCutFreeze) == 8u);
  BOOST_TEST(fixedFieldsSize(MessageType::kSliceState) == 64u);
  BOOST_TEST(fixedFieldsSize(MessageType::kCutCommit) == 8u);
  BOOST_TEST(fixedFieldsSize(MessageType::kRecut) == 12u);
  BOOST_TEST(carriesValues(MessageType::kPush));
  BOOST_TEST(carriesValues(MessageType::kParams));
  BOOST_TEST(carriesValues(MessageType::kShardCopy));
  BOOST_TEST(kProtocolVersion == 11u);
  BOOST_TEST(!carriesValues(MessageType::kHello));
  BOOST_TEST(messageName(MessageType::kStatusReply) == "status-reply");
  BOOST_TEST(messageName(static_cast<MessageType>(6)) == "type 6");
}

// A worker's answers carry a value per parameter; the slices worker 0 and a ps receive in a
// re-cut also carry each parameter's optimizer moments.
BOOST_AUTO_TEST_CASE(frame_limits_fit_the_largest_frame_of_the_whole_model) {
  const size_t parameters = 1000;
  BOOST_TEST(maxFrameBytes({MessageType::kParams}, parameters) == 24u + 4 * parameters);
  BOOST_TEST(maxFrameBytes({MessageType::kParams, MessageType::kSliceState}, parameters) ==
             64u + 12 * parameters);
  BOOST_TEST(maxFrameBytes({MessageType::kPush, MessageType::kShardCopy,
                            MessageType::kSliceState},
                           parameters) == 64u + 12 * parameters);
  const auto payload = maxFrameBytes({MessageType::kParams}, parameters);
  BOOST_TEST(headerError(encodeHeader(MessageType::kParams, payload), payload) == "accepted");
  BOOST_TEST(headerError(encodeHeader(MessageType::kParams, payload + 4), payload) != "accepted");
}

BOOST_AUTO_TEST_CASE(rejects_short_long_and_out_of_range_fields) {
  auto hello = encode(Hello{Role::kWorker, 1, 2, 3, 0, Nonce{}});
  auto shorter = hello;
  shorter.pop_back();
  BOOST_CHECK_THROW(decodeHello(shorter), ProtocolError);
  auto longer = hello;
  longer.push_back(0);
  BOOST_CHECK_THROW(decodeHello(longer), ProtocolError);
  auto badRole = hello;
  badRole[0] = 7;
  BOOST_CHECK_THROW(decodeHello(badRole), ProtocolError);
  auto params = encode(Params{1, true, true, 0, true, 0, 1});
  params[9] = 2;
  BOOST_CHECK_THROW(decodeParams(params), ProtocolError);
  // A part of the training set beyond the parts there are.
  BOOST_CHECK_THROW(decodeParams(encode(Params{1, true, false, 0, false, 3, 3})), ProtocolError);
  BOOST_CHECK_THROW(decodeDone({}), ProtocolError);
  // A slice beyond the model, an index beyond its cut, more moments than any optimizer keeps,
  // more slices to follow than a ps keeps, a welcome to a cut of no ps.
  BOOST_CHECK_THROW(decodeSliceState(encode(SliceState{1, 2, 0, 60000, 50000, 0, 0, {1, 1}}), 101770),
                    ProtocolError);
  BOOST_CHECK_THROW(decodeSliceState(encode(SliceState{1, 2, 2, 0, 10, 0, 0, {1, 1}}), 101770),
                    ProtocolError);
  BOOST_CHECK_THROW(decodeSliceState(encode(SliceState{1, 2, 0, 0, 10, 0, 3, {1, 1}}), 101770),
                    ProtocolError);
  BOOST_CHECK_THROW(decodeSliceState(encode(SliceState{1, 2, 0, 0, 10, 0, 2, {1, 1},
                                                      kMaxFollowingSlices + 1}),
                                     101770),
                    ProtocolError);
  BOOST_CHECK_THROW(decodeWelcome(encode(Welcome{0, 10, 0, 10, 0, 0, 0})), ProtocolError);
  // An encoding no release has, and gradient factors in a lossy encoding.
  auto unknownEncoding = encode(Params{1, true, false, 0, false, 0, 1});
  unknownEncoding.back() = 9;
  BOOST_CHECK_THROW(decodeParams(unknownEncoding), ProtocolError);
  BOOST_CHECK_THROW(decodePush(encode(Push{1, 0, 10, 0, 1, 1, WireEncoding::kQ4})), ProtocolError);
  BOOST_TEST((decodePush(encode(Push{1, 0, 0, 0, 1, 1, WireEncoding::kQ4})).encoding ==
              WireEncoding::kQ4));
}
