from setuptools import find_packages, setup

setup(name="mrinet", version="0.3.0", packages=find_packages(),
      install_requires=["numpy", "nibabel"])
