#include "kiln/video_io.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "core/atomic_file.h"
#include "kiln/error.h"
#include "kiln/image_io.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string averror(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

// FFmpeg's own log lines (encoder banners, warnings) stay out of the terminal; errors
// reach the caller as kiln::Error.
void quietFfmpeg() {
  static const bool once = [] {
    av_log_set_level(AV_LOG_ERROR);
    return true;
  }();
  (void)once;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The encoder state; frees everything FFmpeg allocated, whatever happened.
struct Encoder {
  AVFormatContext* format = nullptr;
  AVCodecContext* codec = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  SwsContext* sws = nullptr;
  AVStream* stream = nullptr;
  ~Encoder() {
    sws_freeContext(sws);
    av_packet_free(&packet);
    av_frame_free(&frame);
    avcodec_free_context(&codec);
    if (format) {
      if (format->pb) avio_closep(&format->pb);
      avformat_free_context(format);
    }
  }
};

void check(int rc, const std::string& path, const char* what) {
  if (rc < 0)
    throw Error(ErrorKind::Io,
                "cannot write '" + path + "': " + what + " failed (" + averror(rc) + ")");
}

// Sends `frame` (null: flush) and writes every packet the encoder gives back.
void drain(Encoder& e, const AVFrame* frame, const std::string& path) {
  check(avcodec_send_frame(e.codec, frame), path, "encoding a frame");
  while (true) {
    const int rc = avcodec_receive_packet(e.codec, e.packet);
    if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
    check(rc, path, "encoding");
    av_packet_rescale_ts(e.packet, e.codec->time_base, e.stream->time_base);
    e.packet->stream_index = e.stream->index;
    check(av_interleaved_write_frame(e.format, e.packet), path, "writing a packet");
  }
}

void toRgb24(const Image& image, std::vector<uint8_t>& out) {
  out.resize(static_cast<std::size_t>(image.width) * image.height * 3);
  const int ch = image.channels;
  for (std::size_t p = 0, n = static_cast<std::size_t>(image.width) * image.height; p < n; ++p)
    for (int c = 0; c < 3; ++c) {
      const float v = image.pixels[p * ch + static_cast<std::size_t>(std::min(c, ch - 1))];
      out[p * 3 + c] = static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
    }
}

void writeContainer(const std::string& path, VideoFormat format, const std::vector<Image>& frames,
                    const VideoWriteOptions& options) {
  const int width = frames.front().width, height = frames.front().height;
  core::AtomicFile file(path);
  {
    Encoder e;
    const char* muxer = format == VideoFormat::Mp4    ? "mp4"
                        : format == VideoFormat::WebM ? "webm"
                                                      : "mov";
    check(avformat_alloc_output_context2(&e.format, nullptr, muxer, file.temporaryPath().c_str()),
          path, "choosing the container");
    const char* codec_name = format == VideoFormat::Mp4    ? "libx264"
                             : format == VideoFormat::WebM ? "libvpx-vp9"
                                                           : "prores_ks";
    const AVCodec* codec = avcodec_find_encoder_by_name(codec_name);
    if (!codec)
      throw Error(ErrorKind::Io, std::string("cannot write '") + path + "': FFmpeg has no " +
                                     codec_name + " encoder");
    e.stream = avformat_new_stream(e.format, nullptr);
    e.codec = avcodec_alloc_context3(codec);
    e.frame = av_frame_alloc();
    e.packet = av_packet_alloc();
    if (!e.stream || !e.codec || !e.frame || !e.packet)
      throw Error(ErrorKind::Io, "cannot write '" + path + "': out of memory");
    const AVRational rate = av_d2q(options.fps, 100000);
    e.codec->width = width;
    e.codec->height = height;
    e.codec->time_base = av_inv_q(rate);
    e.codec->framerate = rate;
    e.codec->pix_fmt = format == VideoFormat::Mov ? AV_PIX_FMT_YUV422P10LE : AV_PIX_FMT_YUV420P;
    e.codec->color_range = AVCOL_RANGE_MPEG;
    e.codec->colorspace = AVCOL_SPC_BT709;
    e.codec->color_primaries = AVCOL_PRI_BT709;
    e.codec->color_trc = AVCOL_TRC_BT709;
    if (e.format->oformat->flags & AVFMT_GLOBALHEADER)
      e.codec->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary* opts = nullptr;
    if (format == VideoFormat::Mp4) {
      av_dict_set(&opts, "crf", std::to_string(options.crf >= 0 ? options.crf : 19).c_str(), 0);
      av_dict_set(&opts, "preset", "medium", 0);
    } else if (format == VideoFormat::WebM) {
      av_dict_set(&opts, "crf", std::to_string(options.crf >= 0 ? options.crf : 31).c_str(), 0);
      av_dict_set(&opts, "b", "0", 0);
      av_dict_set(&opts, "row-mt", "1", 0);
      av_dict_set(&opts, "deadline", "good", 0);
      av_dict_set(&opts, "cpu-used", "4", 0);
    } else {
      av_dict_set(&opts, "profile", "2", 0);  // ProRes 422 (standard)
      av_dict_set(&opts, "vendor", "apl0", 0);
    }
    const int opened = avcodec_open2(e.codec, codec, &opts);
    av_dict_free(&opts);
    check(opened, path, "opening the encoder");
    check(avcodec_parameters_from_context(e.stream->codecpar, e.codec), path,
          "setting up the stream");
    e.stream->time_base = e.codec->time_base;
    e.stream->avg_frame_rate = rate;
    for (const auto& [key, value] : options.metadata)
      av_dict_set(&e.format->metadata, key.c_str(), value.c_str(), 0);
    check(avio_open(&e.format->pb, file.temporaryPath().c_str(), AVIO_FLAG_WRITE), path,
          "opening the file");
    AVDictionary* mux = nullptr;
    if (format != VideoFormat::WebM)
      av_dict_set(&mux, "movflags", "+use_metadata_tags+faststart", 0);
    const int header = avformat_write_header(e.format, &mux);
    av_dict_free(&mux);
    check(header, path, "writing the header");

    e.frame->format = e.codec->pix_fmt;
    e.frame->width = width;
    e.frame->height = height;
    check(av_frame_get_buffer(e.frame, 0), path, "allocating a frame");
    e.sws = sws_getContext(width, height, AV_PIX_FMT_RGB24, width, height, e.codec->pix_fmt,
                           SWS_BICUBIC | SWS_ACCURATE_RND, nullptr, nullptr, nullptr);
    if (!e.sws)
      throw Error(ErrorKind::Io,
                  "cannot write '" + path + "': no colour conversion to the encoder's format");
    // RGB -> limited-range BT.709, as the stream is tagged
    sws_setColorspaceDetails(e.sws, sws_getCoefficients(SWS_CS_ITU709), 1,
                             sws_getCoefficients(SWS_CS_ITU709), 0, 0, 1 << 16, 1 << 16);
    std::vector<uint8_t> rgb;
    const int total = static_cast<int>(frames.size());
    for (int i = 0; i < total; ++i) {
      check(av_frame_make_writable(e.frame), path, "preparing a frame");
      toRgb24(frames[static_cast<std::size_t>(i)], rgb);
      const uint8_t* src[1] = {rgb.data()};
      const int stride[1] = {3 * width};
      sws_scale(e.sws, src, stride, 0, height, e.frame->data, e.frame->linesize);
      e.frame->pts = i;
      drain(e, e.frame, path);
      if (options.progress) options.progress(i + 1, total);
    }
    drain(e, nullptr, path);
    check(av_write_trailer(e.format), path, "finishing the file");
  }  // the encoder is closed before the file is committed
  file.commit();
}

void writePngSequence(const std::string& path, const std::vector<Image>& frames,
                      const VideoWriteOptions& options) {
  fs::path dir = fs::path(path);
  if (dir.filename().empty()) dir = dir.parent_path();
  std::error_code ec;
  if (fs::exists(dir, ec) && (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)))
    throw Error(ErrorKind::InvalidArgument, "cannot write a PNG sequence into '" + dir.string() +
                                                "': it holds files already; choose a new folder");
  std::random_device rd;
  const fs::path temp =
      dir.parent_path() / ("." + dir.filename().string() + ".kiln-" + std::to_string(rd()));
  fs::create_directories(temp, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot create '" + temp.string() + "': " + ec.message());
  try {
    const int total = static_cast<int>(frames.size());
    char fps[32];
    std::snprintf(fps, sizeof fps, "%g", options.fps);
    for (int i = 0; i < total; ++i) {
      Image frame = frames[static_cast<std::size_t>(i)];
      for (const auto& [key, value] : options.metadata) frame.text[key] = value;
      frame.text["kiln_fps"] = fps;
      char name[32];
      std::snprintf(name, sizeof name, "frame_%05d.png", i + 1);
      writeImage((temp / name).string(), frame);
      if (options.progress) options.progress(i + 1, total);
    }
    if (fs::exists(dir, ec)) fs::remove(dir, ec);  // empty, checked above
    fs::rename(temp, dir, ec);
    if (ec)
      throw Error(ErrorKind::Io,
                  "cannot move the frames to '" + dir.string() + "': " + ec.message());
  } catch (...) {
    fs::remove_all(temp, ec);
    throw;
  }
}

// The decoder state; frees everything FFmpeg allocated.
struct Decoder {
  AVFormatContext* format = nullptr;
  AVCodecContext* codec = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  SwsContext* sws = nullptr;
  ~Decoder() {
    sws_freeContext(sws);
    av_packet_free(&packet);
    av_frame_free(&frame);
    avcodec_free_context(&codec);
    avformat_close_input(&format);
  }
};

Image frameToImage(Decoder& d, int width, int height) {
  d.sws = sws_getCachedContext(d.sws, width, height, static_cast<AVPixelFormat>(d.frame->format),
                               width, height, AV_PIX_FMT_RGB24, SWS_BICUBIC | SWS_ACCURATE_RND,
                               nullptr, nullptr, nullptr);
  if (!d.sws) throw Error(ErrorKind::CorruptFile, "cannot convert the video's frames to RGB");
  const bool full = d.frame->color_range == AVCOL_RANGE_JPEG;
  const int space =
      d.frame->colorspace == AVCOL_SPC_BT470BG || d.frame->colorspace == AVCOL_SPC_SMPTE170M
          ? SWS_CS_ITU601
          : SWS_CS_ITU709;
  sws_setColorspaceDetails(d.sws, sws_getCoefficients(space), full ? 1 : 0,
                           sws_getCoefficients(SWS_CS_ITU709), 1, 0, 1 << 16, 1 << 16);
  std::vector<uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  uint8_t* dst[1] = {rgb.data()};
  const int stride[1] = {3 * width};
  sws_scale(d.sws, d.frame->data, d.frame->linesize, 0, height, dst, stride);
  Image image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  image.pixels.resize(rgb.size());
  for (std::size_t i = 0; i < rgb.size(); ++i)
    image.pixels[i] = static_cast<float>(rgb[i]) / 255.0f;
  return image;
}

void checkFrameBudget(const std::string& path, std::size_t frames, int width, int height) {
  const int64_t bytes =
      static_cast<int64_t>(frames) * width * height * 3 * static_cast<int64_t>(sizeof(float));
  if (bytes > kMaxVideoReadBytes)
    throw Error(ErrorKind::InvalidArgument,
                "'" + path + "' holds more frames than Kiln reads at once (" +
                    std::to_string(frames) + " frames of " + std::to_string(width) + "x" +
                    std::to_string(height) + " need over " +
                    std::to_string(kMaxVideoReadBytes >> 30) + " GiB); read fewer frames");
}

Video readPngSequence(const fs::path& dir, int max_frames) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (lower(entry.path().extension().string()) == ".png") files.push_back(entry.path());
  if (files.empty())
    throw Error(ErrorKind::CorruptFile, "'" + dir.string() + "' holds no PNG frames");
  std::sort(files.begin(), files.end());
  Video v;
  // The first frame is read even for max_frames 0: it carries the sequence's metadata.
  const std::size_t reads =
      max_frames < 0 ? files.size() : std::min(files.size(), std::size_t(std::max(max_frames, 1)));
  for (std::size_t i = 0; i < reads; ++i) {
    const auto& f = files[i];
    Image image = readImage(f.string());
    if (i == 0) {
      v.width = image.width;
      v.height = image.height;
      v.metadata = image.text;
      v.codec = "png";
      v.pixel_format = "rgb";
      if (const auto it = image.text.find("kiln_fps"); it != image.text.end())
        v.fps = std::atof(it->second.c_str());
    } else if (image.width != v.width || image.height != v.height) {
      throw Error(ErrorKind::CorruptFile,
                  "'" + f.string() + "' differs in size from the sequence's first frame");
    }
    image.text.clear();
    if (max_frames != 0) {
      checkFrameBudget(dir.string(), v.frames.size() + 1, image.width, image.height);
      v.frames.push_back(std::move(image));
    }
  }
  return v;
}

}  // namespace

void writeVideo(const std::string& path, const std::vector<Image>& frames,
                const VideoWriteOptions& options) {
  const VideoFormat format = videoFormatFor(path);
  if (format == VideoFormat::Invalid)
    throw Error(ErrorKind::InvalidArgument,
                "cannot write '" + path +
                    "': choose a .mp4, .webm or .mov file, or a folder (ending in '/') "
                    "for PNG frames");
  if (frames.empty())
    throw Error(ErrorKind::InvalidArgument, "cannot write '" + path + "': the video has no frames");
  if (!(options.fps > 0.0) || options.fps > 1000.0)
    throw Error(ErrorKind::InvalidArgument,
                "cannot write '" + path + "': the frame rate must be above 0 and at most 1000");
  const Image& first = frames.front();
  for (const Image& f : frames)
    if (f.width != first.width || f.height != first.height || f.channels < 1 ||
        f.pixels.size() != static_cast<std::size_t>(f.width) * f.height * f.channels)
      throw Error(ErrorKind::InvalidArgument,
                  "cannot write '" + path + "': the frames differ in size or are malformed");
  if (format == VideoFormat::PngSequence) return writePngSequence(path, frames, options);
  if (first.width % 2 != 0 || first.height % 2 != 0 || first.width < 2 || first.height < 2)
    throw Error(ErrorKind::InvalidArgument,
                "cannot write '" + path + "': video frames need an even width and height (" +
                    std::to_string(first.width) + "x" + std::to_string(first.height) + ")");
  quietFfmpeg();
  writeContainer(path, format, frames, options);
}

Video readVideo(const std::string& path, int max_frames) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(ErrorKind::FileNotFound, "video '" + path + "' does not exist");
  if (fs::is_directory(path, ec)) return readPngSequence(path, max_frames);
  quietFfmpeg();
  Decoder d;
  if (const int rc = avformat_open_input(&d.format, path.c_str(), nullptr, nullptr); rc < 0)
    throw Error(ErrorKind::CorruptFile, "cannot read video '" + path + "': " + averror(rc));
  if (const int rc = avformat_find_stream_info(d.format, nullptr); rc < 0)
    throw Error(ErrorKind::CorruptFile, "cannot read video '" + path + "': " + averror(rc));
  const AVCodec* codec = nullptr;
  const int index = av_find_best_stream(d.format, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (index < 0 || !codec)
    throw Error(ErrorKind::CorruptFile, "'" + path + "' has no video stream Kiln can decode");
  AVStream* stream = d.format->streams[index];
  d.codec = avcodec_alloc_context3(codec);
  d.frame = av_frame_alloc();
  d.packet = av_packet_alloc();
  if (!d.codec || !d.frame || !d.packet)
    throw Error(ErrorKind::Io, "out of memory reading '" + path + "'");
  if (avcodec_parameters_to_context(d.codec, stream->codecpar) < 0 ||
      avcodec_open2(d.codec, codec, nullptr) < 0)
    throw Error(ErrorKind::CorruptFile, "cannot open the decoder of '" + path + "'");
  Video v;
  v.width = d.codec->width;
  v.height = d.codec->height;
  v.codec = codec->name;
  if (const char* pf = av_get_pix_fmt_name(d.codec->pix_fmt)) v.pixel_format = pf;
  if (v.width <= 0 || v.height <= 0 || v.width > 16384 || v.height > 16384)
    throw Error(ErrorKind::CorruptFile, "'" + path + "' has an implausible frame size");
  const AVRational rate =
      stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
  v.fps = rate.den > 0 ? av_q2d(rate) : 0.0;
  const AVDictionaryEntry* tag = nullptr;
  // keys in lower case: Matroska stores them upper-cased
  while ((tag = av_dict_get(d.format->metadata, "", tag, AV_DICT_IGNORE_SUFFIX)))
    v.metadata[lower(tag->key)] = tag->value;
  const auto want_more = [&] {
    return max_frames < 0 || static_cast<int>(v.frames.size()) < max_frames;
  };
  const auto receive = [&] {
    while (want_more()) {
      const int rc = avcodec_receive_frame(d.codec, d.frame);
      if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
      if (rc < 0)
        throw Error(ErrorKind::CorruptFile, "cannot decode '" + path + "': " + averror(rc));
      if (d.frame->width != v.width || d.frame->height != v.height)
        throw Error(ErrorKind::CorruptFile, "'" + path + "' changes its frame size");
      checkFrameBudget(path, v.frames.size() + 1, v.width, v.height);
      v.frames.push_back(frameToImage(d, v.width, v.height));
    }
  };
  while (want_more() && av_read_frame(d.format, d.packet) >= 0) {
    if (d.packet->stream_index == index) {
      const int rc = avcodec_send_packet(d.codec, d.packet);
      av_packet_unref(d.packet);
      if (rc < 0 && rc != AVERROR(EAGAIN))
        throw Error(ErrorKind::CorruptFile, "cannot decode '" + path + "': " + averror(rc));
      receive();
    } else {
      av_packet_unref(d.packet);
    }
  }
  if (want_more()) {
    avcodec_send_packet(d.codec, nullptr);
    receive();
  }
  return v;
}

}  // namespace kiln
