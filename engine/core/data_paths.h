// Locating the data files Kiln ships (the CLIP vocabulary, later the starter model).
#pragma once

#include <filesystem>
#include <string>

namespace kiln::core {

// The install tree the running executable lies in (<prefix> of <prefix>/bin/kiln), read
// from /proc/self/exe; empty when that cannot be read.
std::filesystem::path executableInstallRoot();

// Full path of a shipped data file. Looks in $KILN_DATA_DIR, share/kiln beside the
// executable's install tree (<exe>/../share/kiln), the configured install prefix's
// share/kiln and the source tree's resources/, in that order. Throws kiln::Error
// (FileNotFound) naming every place it looked.
std::string findDataFile(const std::string& name);

}  // namespace kiln::core
