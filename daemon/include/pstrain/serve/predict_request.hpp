#pragma once

#include <armadillo>
#include <string>

#include "pstrain/data/data_set.hpp"

namespace pstrain::serve {

// The largest request body read, in bytes (about 2,500 images as JSON): a longer one is
// refused with 413 before it is read.
constexpr size_t kMaxBodyBytes = 8 << 20;

// What a request's Content-Type says its body is. kUndeclared: no type, or one that says
// nothing of the content (curl -d's form encoding, text/plain, octet-stream), so the body is
// looked at; kOther: another image type.
enum class BodyType { kJson, kPng, kOther, kUndeclared };

// The Content-Type's media type, lower case, without parameters ("; charset=utf-8").
std::string mediaType(const std::string& contentType);

// The media type the first bytes of `body` say it is, a picture's (image/png, image/jpeg,
// image/gif, image/webp); empty where they are none of those.
std::string sniffedImageType(const std::string& body);

// The Content-Type a body is taken as: `contentType` where it declares one (kJson, kPng, kOther),
// else the picture `body` is (sniffedImageType), else `contentType` as it is. A picture sent
// without its type is answered as it would be with it.
std::string contentTypeOf(const std::string& contentType, const std::string& body);

// The body type `contentType` declares. Throws RequestError 415 for a multipart upload (curl -F),
// which wraps the file in a form where every route reads the file itself.
BodyType declaredBody(const std::string& contentType);

// The images of a /predict body as model inputs (784 rows in [0, 1], one column per image):
// JSON {"images": [[784 values 0-255], ...]}, or a PNG image made into an input as the model's
// data set's pictures were (`pictures`), as `contentType` declares it or, undeclared, as the
// body looks (contentTypeOf). Throws RequestError with the status and one line saying what is wrong.
arma::fmat parsePredictBody(const std::string& body, const std::string& contentType,
                            data::PictureKind pictures);

}  // namespace pstrain::serve
