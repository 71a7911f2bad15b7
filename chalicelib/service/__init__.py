"""protocol-free catalog rules; imports domain/ and store/, never protocol/ or actions/"""
