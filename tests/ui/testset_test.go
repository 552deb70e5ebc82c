package ui

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// testImages reads the first n 28x28 images of Fashion-MNIST's test set (an IDX file, gzipped).
func testImages(t *testing.T, n int) [][]byte {
	file, err := os.Open(filepath.Join(fashionMnist, "t10k-images-idx3-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	unzipped, err := gzip.NewReader(file)
	if err != nil {
		t.Fatal(err)
	}
	var header [4]uint32 // magic, count, rows, columns
	if err := binary.Read(unzipped, binary.BigEndian, &header); err != nil {
		t.Fatal(err)
	}
	if header[0] != 0x803 || header[2] != 28 || header[3] != 28 || int(header[1]) < n {
		t.Fatalf("not an IDX file of at least %d 28x28 images: header %v", n, header)
	}
	images := make([][]byte, n)
	for i := range images {
		images[i] = make([]byte, 784)
		if _, err := io.ReadFull(unzipped, images[i]); err != nil {
			t.Fatal(err)
		}
	}
	return images
}

// jsonPredictions is what /predict answers for the images sent as JSON.
func jsonPredictions(t *testing.T, url string, images [][]byte) []int {
	rows := make([][]int, len(images))
	for i, pixels := range images {
		for _, p := range pixels {
			rows[i] = append(rows[i], int(p))
		}
	}
	body, _ := json.Marshal(map[string]any{"images": rows})
	response, err := http.Post(url+"predict", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var answer struct {
		Predictions []int `json:"predictions"`
	}
	if err := json.NewDecoder(response.Body).Decode(&answer); err != nil || len(answer.Predictions) != len(images) {
		t.Fatalf("/predict of %d JSON images: status %d, %v", len(images), response.StatusCode, err)
	}
	return answer.Predictions
}

func writePng(t *testing.T, path string, pixels []byte) {
	picture := image.NewGray(image.Rect(0, 0, 28, 28))
	copy(picture.Pix, pixels)
	var encoded bytes.Buffer
	if err := png.Encode(&encoded, picture); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, encoded.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// uploadsAgreeWithJSON picks 200 test-set pictures as PNG files with the page's file picker, one
// by one, and checks the class the page shows against /predict's for the same images as JSON,
// and that the page previews the 28x28 input the model saw.
func uploadsAgreeWithJSON(ctx context.Context, t *testing.T, url string) {
	const n = 200
	images := testImages(t, n)
	want := jsonPredictions(t, url, images)
	dir := t.TempDir()
	agree := 0
	for i, pixels := range images {
		path := filepath.Join(dir, fmt.Sprintf("test-%03d.png", i))
		writePng(t, path, pixels)
		if err := chromedp.Run(ctx,
			chromedp.Evaluate(`document.getElementById("clear").click()`, nil),
			chromedp.SetUploadFiles("#file", []string{path}, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		waitUntil(ctx, t, "the class of "+path+" on the page",
			`document.getElementById("prediction").dataset.class !== undefined`, 20*time.Second)
		var shown int
		if err := chromedp.Run(ctx, chromedp.Evaluate(`+document.getElementById("prediction").dataset.class`, &shown)); err != nil {
			t.Fatal(err)
		}
		if shown == want[i] {
			agree++
		}
		if i == 0 {
			previewIsTheInput(ctx, t, pixels)
			padShowsThePicture(ctx, t, pixels)
		}
	}
	t.Logf("the page and JSON /predict agree on %d of %d test-set pictures", agree, n)
	if agree < n*85/100 {
		t.Errorf("the page's classes of uploaded PNGs agree with their JSON twins' on %d of %d; want at least 85%%", agree, n)
	}
}

// previewIsTheInput checks the page's 28x28 preview against the picture: a picture of the data
// set is taken as it is, and the preview draws ink dark on light.
func previewIsTheInput(ctx context.Context, t *testing.T, pixels []byte) {
	var preview []int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		if (document.getElementById("inputSeen").hidden) return [];
		const data = document.getElementById("preview").getContext("2d").getImageData(0, 0, 28, 28).data;
		return [...data].filter((_, i) => i % 4 === 0);
	})()`, &preview)); err != nil {
		t.Fatal(err)
	}
	if len(preview) != 784 {
		t.Fatalf("no 28x28 preview of the input on the page (%d pixels)", len(preview))
	}
	for k, p := range pixels {
		if preview[k] != 255-int(p) {
			t.Fatalf("preview pixel %d is %d; the input's is %d (drawn as %d)", k, preview[k], p, 255-int(p))
		}
	}
}

// padShowsThePicture checks that the drawing pad holds the uploaded picture, fitted to it, a
// square of the pad for each of its pixels: the answer is shown beside what it answers, not
// beside an earlier drawing.
func padShowsThePicture(ctx context.Context, t *testing.T, pixels []byte) {
	var pad []int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const pad = document.getElementById("draw");
		const data = pad.getContext("2d").getImageData(0, 0, pad.width, pad.height).data;
		const cell = pad.width / 28, shown = [];
		for (let row = 0; row < 28; row++) {
			for (let column = 0; column < 28; column++) {
				const x = Math.floor((column + 0.5) * cell), y = Math.floor((row + 0.5) * cell);
				shown.push(data[4 * (y * pad.width + x)]);
			}
		}
		return shown;
	})()`, &pad)); err != nil {
		t.Fatal(err)
	}
	for k, p := range pixels {
		if pad[k] != int(p) {
			t.Fatalf("the pad's square for pixel %d of the uploaded picture is %d; the picture's is %d", k, pad[k], p)
		}
	}
}
