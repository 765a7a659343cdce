// ChakraEt: writes a Chakra execution-trace file from schema messages built in a test (the
// framing Chakra's tools use: a GlobalMetadata, then each Node, each after its length as a varint).
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <fstream>
#include <string>
#include <vector>

#include "sim/workload/chakra/chakra_et.pb.h"

namespace fabricsim::testsupport {

inline void writeChakraEt(const std::string& path, const std::vector<::fabricsim::chakra::Node>& nodes) {
  std::string out;
  auto append = [&](const google::protobuf::MessageLite& m) {
    const std::string body = m.SerializeAsString();
    google::protobuf::io::StringOutputStream s(&out);
    google::protobuf::io::CodedOutputStream c(&s);
    c.WriteVarint32(static_cast<uint32_t>(body.size()));
    c.WriteRaw(body.data(), static_cast<int>(body.size()));
  };
  ::fabricsim::chakra::GlobalMetadata meta;
  meta.set_version("0.0.4");
  append(meta);
  for (const auto& n : nodes) append(n);
  std::ofstream(path, std::ios::binary) << out;
}

}  // namespace fabricsim::testsupport
