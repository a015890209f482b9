// Locating the data files Kiln ships (the CLIP vocabulary, later the starter model).
#pragma once

#include <string>

namespace kiln::core {

// Full path of a shipped data file. Looks in $KILN_DATA_DIR, share/kiln beside the
// executable's install tree (<exe>/../share/kiln), the configured install prefix's
// share/kiln and the source tree's resources/, in that order. Throws kiln::Error
// (FileNotFound) naming every place it looked.
std::string findDataFile(const std::string& name);

}  // namespace kiln::core
