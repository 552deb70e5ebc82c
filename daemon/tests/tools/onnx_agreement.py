#!/usr/bin/python3
"""Checks a pstrain model.onnx with runtimes pstrain did not write, against pstrain's own answers.

ONNX's checker (with shape inference) reads the file and its interface is checked (input
`pixels` float32 [N, 784], outputs `probabilities` float32 [N, 10] and `predictions` int64 [N],
opset 13); OpenCV's dnn module runs it on images of an IDX file (raw 0-255 values, plus an
all-0 and an all-255 image), and `pstrain serve`'s POST /predict answers the same images. Every
image must get the same class from both and probabilities within the tolerance.

usage: onnx_agreement.py MODEL_ONNX [PREDICT_URL IMAGES_IDX] [--count N] [--tolerance 1e-5]
                         [--summary-json FILE]

With MODEL_ONNX alone: the checker, the interface, and OpenCV's answer for an all-black image.

Prints one line, e.g. `10002 images: the same class from OpenCV 4.6.0 and pstrain serve on
10002; probabilities differ by at most 1.2e-07 (tolerance 1e-05)`; exits 1 where they disagree.
Needs Debian's python3-onnx and python3-opencv (ci/install-deps.sh --tests).
"""
import argparse
import gzip
import json
import struct
import sys
import urllib.request

import cv2
import numpy as np
import onnx

BATCH = 1000  # images a POST: about 3 MB of JSON, within /predict's 8 MiB body limit


def read_images(path, count):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, n, rows, cols = struct.unpack(">IIII", data[:16])
    if magic != 0x803 or rows * cols != 784:
        sys.exit(f"{path}: not an IDX file of 28x28 images")
    n = min(n, count)
    images = np.frombuffer(data, np.uint8, n * 784, 16).reshape(n, 784)
    extremes = np.array([[0] * 784, [255] * 784], np.uint8)
    return np.concatenate([images, extremes]).astype(np.float32)


def check_interface(path):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    graph = model.graph

    def described(info):
        tensor = info.type.tensor_type
        dims = [d.dim_param or d.dim_value for d in tensor.shape.dim]
        return info.name, onnx.TensorProto.DataType.Name(tensor.elem_type), dims

    found = [described(i) for i in graph.input] + [described(o) for o in graph.output]
    expected = [("pixels", "FLOAT", ["N", 784]), ("probabilities", "FLOAT", ["N", 10]),
                ("predictions", "INT64", ["N"])]
    if found != expected:
        sys.exit(f"{path}: interface {found}, expected {expected}")
    opsets = [(o.domain, o.version) for o in model.opset_import]
    if opsets != [("", 13)]:
        sys.exit(f"{path}: opsets {opsets}, expected [('', 13)]")


def opencv_answers(path, images):
    net = cv2.dnn.readNetFromONNX(path)
    net.setInput(images, "pixels")
    probabilities, predictions = net.forward(["probabilities", "predictions"])
    return probabilities, predictions.reshape(-1).astype(np.int64)  # OpenCV's ArgMax: float [N, 1]


def pstrain_answers(url, images):
    probabilities, predictions = [], []
    for start in range(0, len(images), BATCH):
        rows = images[start:start + BATCH].astype(np.int64).tolist()
        request = urllib.request.Request(url, json.dumps({"images": rows}).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as answer:
            body = json.load(answer)
        probabilities += body["probabilities"]
        predictions += body["predictions"]
    return np.array(probabilities, np.float64), np.array(predictions, np.int64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("predict_url", nargs="?")
    parser.add_argument("images", nargs="?")
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--summary-json")
    args = parser.parse_args()

    check_interface(args.model)
    if not args.images:
        probabilities, predictions = opencv_answers(args.model, np.zeros((1, 784), np.float32))
        print(f"{args.model}: ONNX's checker passes; OpenCV {cv2.__version__} answers class "
              f"{predictions[0]} with probability {probabilities[0, predictions[0]]:.3g} for a "
              "blank image")
        return
    images = read_images(args.images, args.count)
    cv_probabilities, cv_predictions = opencv_answers(args.model, images)
    ps_probabilities, ps_predictions = pstrain_answers(args.predict_url, images)
    same = int(np.sum(cv_predictions == ps_predictions))
    difference = float(np.max(np.abs(cv_probabilities - ps_probabilities)))
    consistent = bool(np.all(cv_predictions == np.argmax(cv_probabilities, axis=1)))
    print(f"{len(images)} images: the same class from OpenCV {cv2.__version__} and pstrain serve "
          f"on {same}; probabilities differ by at most {difference:.3g} "
          f"(tolerance {args.tolerance:g})")
    if args.summary_json:
        with open(args.summary_json, "w") as f:
            json.dump({"images": len(images), "same_class": same, "max_abs_difference": difference,
                       "tolerance": args.tolerance, "opencv": cv2.__version__,
                       "onnx": onnx.__version__}, f)
    if not consistent:
        sys.exit("OpenCV's predictions are not the argmax of its probabilities")
    if same != len(images) or difference > args.tolerance:
        sys.exit(1)


if __name__ == "__main__":
    main()
