// Merged into JupyterLab's builder config. Module ids by order in the module graph, not hashed from names:
// the container entry's name holds absolute paths, so hashed ids would differ with the folder built in,
// and the CI check (.ci/labextension-check.sh) builds in another folder than the committed build was.
module.exports = {
  optimization: { moduleIds: 'natural' }
};
